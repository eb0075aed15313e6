//! Tests of what only MCP has: the prompts.

#[test]
fn prompts_tell_the_model_how_to_combine_tools() {
    let s = crate::prompts::summarize_topic("networking");
    for needle in [
        "kb_list_topics",
        "kb_search",
        "kb_read",
        "low_confidence",
        "cite the path",
    ] {
        assert!(s.contains(needle), "{needle}");
    }
    assert!(crate::prompts::deep_dive("q").contains("kb_links"));
    assert!(crate::prompts::whats_new(None).contains("not on when files changed"));
    assert!(crate::prompts::find_gaps(Some("t")).contains("Do not write the missing content"));
}
