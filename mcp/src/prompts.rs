//! The four prompts: how to combine the tools, cite paths and surface low confidence.
//!
//! Their texts are compiled in, not configurable: a prompt is text handed to a model,
//! and a workspace file must not be able to rewrite it.

use schemars::JsonSchema;
use serde::Deserialize;

/// Server instructions sent at `initialize`.
pub const INSTRUCTIONS: &str = "folio serves one folder of Markdown as a knowledge base. \
Find with kb_search (hybrid by default: BM25 and embeddings fused; check low_confidence), read current source with kb_read (by path or pointer), \
navigate with kb_outline, kb_list_files, kb_list_topics and kb_links. \
Edits go through pointers: kb_read gives each element a pointer logical~selfHash~subtreeHash; pass it to kb_patch or kb_edit_table. \
A CONFLICT means the element changed since you read it: read again. Writing tools need writes allowed: over stdio the server started with --allow-writes, over HTTP a read-write token (PERMISSION_DENIED otherwise). \
Always cite the paths you used.";

const CITATION_RULES: &str = "Rules: cite the path (and line range when useful) of every document you use. \
If kb_search returns low_confidence: true, say so plainly instead of presenting the hits as an answer. \
If the knowledge base is silent on something, say that it is silent; do not fill the gap from general knowledge.";

/// Arguments of `summarize_topic`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = folio_core::host::portable_schema)]
pub struct TopicArgs {
    /// The topic to summarise: a category or topic name from kb_list_topics, or free words.
    pub topic: String,
}

/// Arguments of `deep_dive`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = folio_core::host::portable_schema)]
pub struct QuestionArgs {
    /// The question to answer from the knowledge base.
    pub question: String,
}

/// Arguments of `whats_new`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = folio_core::host::portable_schema)]
pub struct SinceArgs {
    /// First day to include, YYYY-MM-DD (default: 30 days before today).
    #[serde(default)]
    pub since: Option<String>,
}

/// Arguments of `find_gaps`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = folio_core::host::portable_schema)]
pub struct OptionalTopicArgs {
    /// Limit the survey to this topic (optional).
    #[serde(default)]
    pub topic: Option<String>,
}

/// `summarize_topic`.
pub fn summarize_topic(topic: &str) -> String {
    format!(
        "Summarise what this knowledge base says about: {topic}\n\n\
1. Call kb_list_topics and check whether `{topic}` is a category or topic; if it is, pass it as the `category` or `topic` filter of kb_search.\n\
2. Call kb_search with the topic's key terms (several searches with different wordings if the first is thin).\n\
3. For the most relevant hits, call kb_read with the hit's path (and pointer for its section) to read the current source, not just the snippet.\n\
4. Write the summary, grouped by theme, and end with what the knowledge base does not cover about the topic.\n\n{CITATION_RULES}"
    )
}

/// `deep_dive`.
pub fn deep_dive(question: &str) -> String {
    format!(
        "Answer this question from the knowledge base: {question}\n\n\
Do not stop at the first search.\n\
1. kb_search for the question's key terms.\n\
2. For the top hits, kb_read the sections they point at, and kb_links (depth 2) to find the documents they link to and that link to them; read the relevant ones.\n\
3. Search again with the vocabulary you found in those documents (names, terms of art), and read what that turns up.\n\
4. Answer, showing which document supports each part, and note contradictions between documents.\n\n{CITATION_RULES}"
    )
}

/// `whats_new`.
pub fn whats_new(since: Option<&str>) -> String {
    let since_text = match since {
        Some(s) => format!("since {s}"),
        None => {
            "in the last 30 days (compute the date 30 days before today as YYYY-MM-DD)".to_string()
        }
    };
    format!(
        "Give an overview of the documents dated {since_text}.\n\n\
Use kb_search with `date_from` set to that day (YYYY-MM-DD exactly: any other form is rejected) and queries for the main themes from kb_list_topics; read the most important hits with kb_read.\n\
Say in your answer that `date_from` filters on the frontmatter `date` an author wrote, not on when files changed: documents without a `date` never appear, and the overview is an approximation.\n\n{CITATION_RULES}"
    )
}

/// `find_gaps`.
pub fn find_gaps(topic: Option<&str>) -> String {
    let scope = topic.map_or_else(
        || "the whole knowledge base".to_string(),
        |t| format!("the topic `{t}`"),
    );
    format!(
        "Find gaps in {scope}.\n\n\
1. kb_list_topics to see what exists and how many documents each group has.\n\
2. Ask kb_search the questions a reader of {scope} would ask; note every query that returns low_confidence: true or no results.\n\
3. kb_links on central documents: list broken links (missing-file, missing-heading) — they often mark pages that were planned but never written.\n\
4. Look for very short documents (kb_read) that are stubs.\n\
Report what is missing or thin, with the queries and paths that show it. Do not write the missing content.\n\n{CITATION_RULES}"
    )
}
