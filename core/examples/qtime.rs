use folio_core::embed::Embedder;
use std::time::Instant;
fn main() {
    let dir = folio_core::embed::builtin::default_model_dir().unwrap();
    let e = folio_core::embed::builtin::BuiltinEmbedder::load(&dir).unwrap();
    let qs = ["kubernetes","release notes","pull request review","code of conduct","test","git commit","list files in a directory","compress archive","ファイル","圧縮","下载","파일"];
    for q in qs { let _ = e.embed_query(q).unwrap(); }
    let mut t = vec![];
    for _ in 0..10 { for q in qs { let s = Instant::now(); e.embed_query(q).unwrap(); t.push(s.elapsed().as_micros()); } }
    t.sort();
    println!("embed_query p50 {} us p95 {} us; tokens {:?}", t[t.len()/2], t[t.len()*95/100], qs.iter().map(|q| e.token_ids(&format!("query: {q}")).len()).collect::<Vec<_>>());
}
#[allow(dead_code)]
fn n() {}
