use folio_core::embed::Embedder;
use folio_core::search::SearchQuery;
use folio_core::search::pipeline::{PipelineOptions, SearchMode};
use folio_core::store::Store;
use std::time::Instant;
const QS: [&str; 12] = ["kubernetes","release notes","pull request review","\"code of conduct\"","test -flaky","git commit","list files in a directory","compress archive","ファイル","圧縮","下载","파일"];
fn p50(mut v: Vec<u128>) -> (u128, u128) { v.sort(); (v[v.len()/2], v[v.len()*95/100]) }
fn main() {
    let db = std::env::args().nth(1).unwrap();
    let dir = folio_core::embed::builtin::default_model_dir().unwrap();
    let e = folio_core::embed::builtin::BuiltinEmbedder::load(&dir).unwrap();
    let store = Store::open(std::path::Path::new(&db)).unwrap();
    let opts = PipelineOptions::for_mode(SearchMode::Hybrid);
    let (mut te, mut tl, mut tv, mut tall, mut tlex, mut td) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..5 { for q in QS {
        let t = Instant::now(); let v = e.embed_query(&folio_core::search::semantic::query_embedding_text(q)).unwrap(); te.push(t.elapsed().as_micros());
        let mut sq = SearchQuery::new(q); sq.limit = 50;
        let t = Instant::now(); store.search_lexical(&sq).unwrap(); tl.push(t.elapsed().as_micros());
        let t = Instant::now(); let hits = store.vector_search_ids(e.model_id(), &v, 50, &sq).unwrap(); tv.push(t.elapsed().as_micros());
        let t = Instant::now(); let _ = store.vector_status().unwrap(); td.push(t.elapsed().as_micros());
        let _ = hits;
        let t = Instant::now(); folio_core::search::semantic::search(&store, Some(&e), &SearchQuery::new(q), &opts).unwrap(); tall.push(t.elapsed().as_micros());
        let t = Instant::now(); folio_core::search::semantic::search(&store, Some(&e), &SearchQuery::new(q), &PipelineOptions::for_mode(SearchMode::Lexical)).unwrap(); tlex.push(t.elapsed().as_micros());
    }}
    println!("embed {:?} lexical50 {:?} knn50 {:?} vector_status {:?} | full hybrid {:?} full lexical {:?}", p50(te), p50(tl), p50(tv), p50(td), p50(tall), p50(tlex));
}
