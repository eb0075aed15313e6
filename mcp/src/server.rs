//! The rmcp server: tool router, prompts, resources, and the stdio entry point.
//!
//! Tool bodies are one line each: they run the matching [`Host`] method on a blocking
//! thread. A panic there fails that one call with an `INTERNAL` tool error; the server
//! keeps running. `server/discover` (sent by newer clients before `initialize`) is
//! answered with -32601 so they fall back to `initialize`, where protocol versions newer
//! than 2025-11-25 are negotiated down.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock,
    DiscoverRequestMethod, DiscoverResult, Implementation, IntoContents,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, PromptMessage,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{
    ErrorData, Json, RoleServer, ServerHandler, Service, ServiceExt, prompt, prompt_handler,
    prompt_router, tool, tool_handler, tool_router,
};
use serde::Serialize;

use crate::caller::{Caller, WRITING_TOOLS};
use crate::prompts;
use folio_core::host::edit::{CreateArgs, DeleteArgs, EditTableArgs, MoveArgs, PatchArgs};
use folio_core::host::files::{DownloadArgs, ListFilesArgs};
use folio_core::host::images::{
    DeleteImageArgs, ListImagesArgs, LoadImageArgs, MoveImageArgs, SaveImageArgs,
};
use folio_core::host::knowledge::PrivateAccess;
use folio_core::host::links::LinksArgs;
use folio_core::host::read::{OutlineArgs, ReadArgs};
use folio_core::host::resources::Contents;
use folio_core::host::search::SearchRequest;
use folio_core::host::status::ReindexArgs;
use folio_core::host::{ErrorCode, Host, HostError, HostResult, Options};

/// A host operation that ran and failed, as an MCP tool error: `isError: true` with the
/// JSON `{code, message}` as text. The one place where [`HostError`] meets MCP.
#[derive(Debug)]
pub struct ToolError(pub HostError);

impl From<HostError> for ToolError {
    fn from(err: HostError) -> ToolError {
        ToolError(err)
    }
}

impl rmcp::model::IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        let json = serde_json::to_string(&self.0).unwrap_or_else(|_| {
            format!("{{\"code\":\"INTERNAL\",\"message\":{:?}}}", self.0.message)
        });
        vec![ContentBlock::text(json)]
    }
}

/// The folio MCP server.
#[derive(Clone)]
pub struct FolioServer {
    kb: Arc<Host>,
    /// The agent id of `--agent-id` / `[mcp] agent_id`; else each call uses the client's
    /// `<name>/<version>` from `initialize`.
    agent_id: Option<String>,
    /// The agent whose HTTP tokens may see and fill the private KnowledgePulse folder
    /// (`[mcp.http] private_owner`); `None`: no HTTP caller may.
    private_owner: Option<String>,
    tool_router: Arc<ToolRouter<FolioServer>>,
    prompt_router: Arc<PromptRouter<FolioServer>>,
}

/// Runs `f` on a blocking thread; a panic becomes an `INTERNAL` tool error.
async fn blocking<T: Send + 'static>(
    kb: &Arc<Host>,
    f: impl FnOnce(&Host) -> HostResult<T> + Send + 'static,
) -> HostResult<T> {
    let kb = Arc::clone(kb);
    match tokio::task::spawn_blocking(move || f(&kb)).await {
        Ok(res) => res,
        Err(err) if err.is_panic() => {
            tracing::error!("a tool panicked; the call failed and the server goes on");
            Err(HostError::new(
                ErrorCode::Internal,
                "internal error: the tool panicked (this is a bug in folio)",
            ))
        }
        Err(err) => Err(HostError::internal(err)),
    }
}

async fn json<T: Serialize + Send + 'static>(
    kb: &Arc<Host>,
    f: impl FnOnce(&Host) -> HostResult<T> + Send + 'static,
) -> Result<Json<T>, ToolError> {
    blocking(kb, f).await.map(Json).map_err(ToolError)
}

/// A tool schema as clients read it most widely: only the formats JSON Schema defines,
/// and nullable fields as `anyOf` (core `host::schema::drop_nonstandard_formats`,
/// `split_nullable_types`).
fn portable_tool_schema(schema: &rmcp::model::JsonObject) -> rmcp::model::JsonObject {
    let mut value = serde_json::Value::Object(schema.clone());
    folio_core::host::schema::drop_nonstandard_formats(&mut value);
    folio_core::host::schema::split_nullable_types(&mut value);
    match value {
        serde_json::Value::Object(obj) => obj,
        _ => unreachable!("an object stays an object"),
    }
}

#[tool_router(router = tool_router)]
impl FolioServer {
    /// A server over `kb`.
    pub fn new(kb: Arc<Host>) -> FolioServer {
        FolioServer {
            kb,
            agent_id: None,
            private_owner: None,
            tool_router: Self::shared_tool_router(),
            prompt_router: Self::shared_prompt_router(),
        }
    }

    /// The tools with their portable schemas, built once per process and shared: every
    /// HTTP session has a server of its own, and building the schemas for each cost about
    /// 850 KiB a session.
    fn shared_tool_router() -> Arc<ToolRouter<FolioServer>> {
        static TOOLS: std::sync::OnceLock<Arc<ToolRouter<FolioServer>>> =
            std::sync::OnceLock::new();
        Arc::clone(TOOLS.get_or_init(|| {
            let mut tool_router = Self::tool_router();
            for route in tool_router.map.values_mut() {
                let tool = &mut route.attr;
                tool.input_schema = Arc::new(portable_tool_schema(&tool.input_schema));
                if let Some(output) = &tool.output_schema {
                    tool.output_schema = Some(Arc::new(portable_tool_schema(output)));
                }
            }
            Arc::new(tool_router)
        }))
    }

    /// The prompts, built once per process ([`FolioServer::shared_tool_router`]).
    fn shared_prompt_router() -> Arc<PromptRouter<FolioServer>> {
        static PROMPTS: std::sync::OnceLock<Arc<PromptRouter<FolioServer>>> =
            std::sync::OnceLock::new();
        Arc::clone(PROMPTS.get_or_init(|| Arc::new(Self::prompt_router())))
    }

    /// The same server recording `agent_id` (when given) as the agent of every
    /// KnowledgePulse contribution and verdict.
    pub fn with_agent_id(mut self, agent_id: Option<String>) -> FolioServer {
        self.agent_id = agent_id.filter(|a| !a.trim().is_empty());
        self
    }

    /// The same server letting HTTP tokens of agent `owner` (when given) see and fill the
    /// private KnowledgePulse folder, as a stdio client does.
    pub fn with_private_owner(mut self, owner: Option<String>) -> FolioServer {
        self.private_owner = owner.filter(|a| !a.trim().is_empty());
        self
    }

    /// Whether this request may see and fill the private folder: over stdio (no HTTP
    /// request) yes; over HTTP only with a token of the configured owner (never with
    /// `--no-auth`, where anyone on the machine could call).
    fn private_access(&self, context: &RequestContext<RoleServer>) -> PrivateAccess {
        let over_http = context
            .extensions
            .get::<axum::http::request::Parts>()
            .is_some();
        let owner = Caller::of(&context.extensions)
            .is_some_and(|c| self.private_owner.as_deref() == Some(c.agent.as_str()));
        if !over_http || owner {
            PrivateAccess::Owner
        } else {
            PrivateAccess::Others
        }
    }

    /// The knowledge base.
    pub fn kb(&self) -> &Arc<Host> {
        &self.kb
    }

    /// Who is calling: over HTTP the token's agent id; else the configured agent id, else
    /// the client's `<name>/<version>`.
    fn agent(&self, context: &RequestContext<RoleServer>) -> Result<String, ToolError> {
        if let Some(caller) = Caller::of(&context.extensions) {
            return Ok(caller.agent.clone());
        }
        if let Some(id) = &self.agent_id {
            return Ok(id.clone());
        }
        match context.peer.peer_info() {
            Some(info) => Ok(format!(
                "{}/{}",
                info.client_info.name, info.client_info.version
            )),
            None => Err(ToolError(HostError::invalid(
                "no agent id: start `folio mcp --agent-id ID`, or send clientInfo in initialize",
            ))),
        }
    }

    /// Index status: document and chunk counts, whether writes are allowed, and the progress and last result of the background reindex (`indexing`). Call with `{}`.
    #[tool(name = "kb_status", annotations(read_only_hint = true))]
    async fn kb_status(&self) -> Result<Json<folio_core::host::status::StatusOutput>, ToolError> {
        json(&self.kb, |kb| kb.status()).await
    }

    /// Starts a background reindex (incremental by content hash; `force` rewrites everything), or joins the one already running, and returns at once. Poll kb_status for progress and the result.
    #[tool(
        name = "kb_reindex",
        annotations(read_only_hint = false, idempotent_hint = true)
    )]
    async fn kb_reindex(
        &self,
        Parameters(args): Parameters<ReindexArgs>,
    ) -> Result<Json<folio_core::host::status::ReindexOutput>, ToolError> {
        let kb = Arc::clone(&self.kb);
        kb.start_reindex(args.force).map(Json).map_err(ToolError)
    }

    /// Searches the indexed chunks of Markdown notes and of the other documents folio reads (PDF, Word, PowerPoint, spreadsheets, CSV, text; source code when enabled): hybrid by default (BM25 and embedding similarity fused by Reciprocal Rank Fusion; lexical until the index has vectors), or `semantic` / `lexical`, with filters (path globs, category, topic, tags, dates, frontmatter fields). Returns {results, low_confidence, filter_applied, mode, indexing, embedding}; each hit has path, pointer, heading_path, start_line/end_line, score, snippet, indexedSourceHash, a kb://doc/ uri and a file: uri, and in another format page (PDF) or symbol_kind and symbol (source code). The index may lag behind the files: read the source with kb_read before quoting or editing.
    #[tool(name = "kb_search", annotations(read_only_hint = true))]
    async fn kb_search(
        &self,
        Parameters(args): Parameters<SearchRequest>,
    ) -> Result<Json<folio_core::host::search::SearchResponse>, ToolError> {
        json(&self.kb, move |kb| kb.search(&args)).await
    }

    /// Reads a Markdown document's current source (not the index): the whole file, or what one element owns when given a pointer (a heading: its section; a table: also its columns and rows). Paged by bytes (offset / next_offset). Returns the text, the file's sourceHash, and the elements in the page with their pointers for kb_patch. A PDF, Office file, spreadsheet, text or source file is read as its extracted text (read-only, with its format); a hit's `L<start>-<end>~…` pointer reads those lines.
    #[tool(name = "kb_read", annotations(read_only_hint = true))]
    async fn kb_read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
    ) -> Result<Json<folio_core::host::read::ReadOutput>, ToolError> {
        json(&self.kb, move |kb| kb.read(&args)).await
    }

    /// The heading tree of a Markdown document with each heading's pointer, level, slug and line range (from the current source).
    #[tool(name = "kb_outline", annotations(read_only_hint = true))]
    async fn kb_outline(
        &self,
        Parameters(args): Parameters<OutlineArgs>,
    ) -> Result<Json<folio_core::host::read::OutlineOutput>, ToolError> {
        json(&self.kb, move |kb| kb.outline(&args)).await
    }

    /// Lists Markdown files and other files (assets, not indexed) under the root, honouring .gitignore. `pathPrefix` is a folder or one exact file, never a partial name; `includeGlob` matches paths.
    #[tool(name = "kb_list_files", annotations(read_only_hint = true))]
    async fn kb_list_files(
        &self,
        Parameters(args): Parameters<ListFilesArgs>,
    ) -> Result<Json<folio_core::host::files::ListFilesOutput>, ToolError> {
        json(&self.kb, move |kb| kb.list_files(&args)).await
    }

    /// Lists the indexed categories (first folder) and topics (first two folders) with document counts and, per topic, the folder tree below it. Use the names as kb_search `category` / `topic` filters. Call with `{}`.
    #[tool(name = "kb_list_topics", annotations(read_only_hint = true))]
    async fn kb_list_topics(
        &self,
    ) -> Result<Json<folio_core::host::files::ListTopicsOutput>, ToolError> {
        json(&self.kb, |kb| kb.list_topics()).await
    }

    /// Links of a Markdown document: outgoing links with their resolution, incoming links from other documents, an optional walk up to depth 3, and broken links with stable diagnostic codes (missing-file, missing-heading, …). With `direction: "orphans"` (and `path` a folder, or omitted): the documents no other document links to.
    #[tool(name = "kb_links", annotations(read_only_hint = true))]
    async fn kb_links(
        &self,
        Parameters(args): Parameters<LinksArgs>,
    ) -> Result<Json<folio_core::host::links::LinksOutput>, ToolError> {
        json(&self.kb, move |kb| kb.links(&args)).await
    }

    /// Connection graph of a document: starting from its chunks, adds the chunks most similar in meaning (embedding cosine), level by level (breadth-first), so you reach documents that share no words with your query. Use it after kb_search, on a good hit, to find related material. Nodes carry parent, depth, score, pointer and a snippet; `truncated` says a cap cut the walk. Needs embeddings (kb_status `search_modes` includes `semantic`).
    #[tool(name = "kb_graph", annotations(read_only_hint = true))]
    async fn kb_graph(
        &self,
        Parameters(args): Parameters<folio_core::host::similarity::GraphArgs>,
    ) -> Result<Json<folio_core::host::similarity::GraphOutput>, ToolError> {
        json(&self.kb, move |kb| kb.graph(&args)).await
    }

    /// Structural edit of one Markdown file by element pointers (from kb_read / kb_outline / kb_search): replace_element (alias replace), replace_section, delete_section, replace_subtree, insert_before, insert_after, delete; pointer `document` inserts at the file's start or end. set_field {key, value} / delete_field {key} edit one top-level key of the YAML frontmatter (pointer `document` or none): only that key's lines change, a missing key goes at the end of the block, a file without frontmatter gets one. Pointers are checked by selfHash (and subtreeHash for section/subtree operations) and re-anchored if the element moved. All operations apply together or not at all; the result must keep every untouched element, list and heading level. Unchanged bytes stay as they were. Needs allow_writes.
    #[tool(
        name = "kb_patch",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_patch(
        &self,
        Parameters(args): Parameters<PatchArgs>,
    ) -> Result<Json<folio_core::host::edit::PatchOutput>, ToolError> {
        json(&self.kb, move |kb| kb.patch(&args)).await
    }

    /// Edits a GFM table by its pointer: update_cells, insert_row, delete_row, insert_column, delete_column, rename_column, set_alignment. Rows by `where {column, equals}` or rowIndex, columns by header or columnIndex. Values are literal text (escaped) unless valueFormat is `markdown`. Returns the table's new pointer. Needs allow_writes.
    #[tool(
        name = "kb_edit_table",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_edit_table(
        &self,
        Parameters(args): Parameters<EditTableArgs>,
    ) -> Result<Json<folio_core::host::edit::EditTableOutput>, ToolError> {
        json(&self.kb, move |kb| kb.edit_table(&args)).await
    }

    /// Creates a new Markdown file (fails with ALREADY_EXISTS if the path exists). Needs allow_writes.
    #[tool(
        name = "kb_create",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn kb_create(
        &self,
        Parameters(args): Parameters<CreateArgs>,
    ) -> Result<Json<folio_core::host::edit::CreateOutput>, ToolError> {
        json(&self.kb, move |kb| kb.create(&args)).await
    }

    /// Moves or renames a Markdown file and, unless update_links is false, rewrites the Markdown links that point at it in other documents (and its own relative links). Fails with ALREADY_EXISTS if the target exists. Needs allow_writes.
    #[tool(
        name = "kb_move",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_move(
        &self,
        Parameters(args): Parameters<MoveArgs>,
    ) -> Result<Json<folio_core::host::edit::MoveOutput>, ToolError> {
        json(&self.kb, move |kb| kb.move_document(&args)).await
    }

    /// Deletes a Markdown file (optionally only if its sourceHash still matches). Links to it are not changed; check kb_links incoming first. Needs allow_writes.
    #[tool(
        name = "kb_delete",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_delete(
        &self,
        Parameters(args): Parameters<DeleteArgs>,
    ) -> Result<Json<folio_core::host::edit::DeleteOutput>, ToolError> {
        json(&self.kb, move |kb| kb.delete(&args)).await
    }

    /// Returns any regular file of the knowledge base (at most 25 MiB) as an embedded binary resource, followed by {path, mimeType, bytes, sha256}.
    #[tool(
        name = "kb_download_file",
        annotations(read_only_hint = true),
        output_schema = rmcp::handler::server::tool::schema_for_type::<folio_core::host::files::DownloadOutput>()
    )]
    async fn kb_download_file(
        &self,
        Parameters(args): Parameters<DownloadArgs>,
    ) -> Result<CallToolResult, ToolError> {
        let d = blocking(&self.kb, move |kb| kb.download(&args)).await?;
        use base64::Engine;
        let blob = base64::engine::general_purpose::STANDARD.encode(&d.data);
        let uri = folio_core::host::doc_uri(&d.meta.path).replacen("kb://doc/", "kb://file/", 1);
        let meta = serde_json::to_value(&d.meta).map_err(|e| ToolError(HostError::internal(e)))?;
        let mut result = CallToolResult::structured(meta.clone());
        result.content = vec![
            ContentBlock::resource(
                ResourceContents::blob(blob, uri).with_mime_type(d.meta.mime_type.clone()),
            ),
            ContentBlock::text(meta.to_string()),
        ];
        Ok(result)
    }

    /// Lists the images (PNG, JPEG, WebP, GIF; any folder, not only images/) with their MIME type and size, ordered by path case-insensitively, then by exact spelling; paged with `cursor` / `nextCursor` (pageSize 1–200, default 50). A cursor stays valid when the image it ends on is deleted. Call with `{}` for the first page.
    #[tool(name = "kb_list_images", annotations(read_only_hint = true))]
    async fn kb_list_images(
        &self,
        Parameters(args): Parameters<ListImagesArgs>,
    ) -> Result<Json<folio_core::host::images::ListImagesOutput>, ToolError> {
        json(&self.kb, move |kb| kb.list_images(&args)).await
    }

    /// Shows an image: an MCP image block first (PNG, JPEG and WebP as they are; a GIF as its first frame in PNG), then JSON metadata of the file {path, mimeType, bytes, sha256}. Checks the extension, the format's signature and the size (at most 25 MiB).
    #[tool(name = "kb_load_image", annotations(read_only_hint = true))]
    async fn kb_load_image(
        &self,
        Parameters(args): Parameters<LoadImageArgs>,
    ) -> Result<CallToolResult, ToolError> {
        let loaded = blocking(&self.kb, move |kb| kb.load_image(&args)).await?;
        use base64::Engine;
        let data = base64::engine::general_purpose::STANDARD.encode(&loaded.display);
        let meta =
            serde_json::to_string(&loaded.meta).map_err(|e| ToolError(HostError::internal(e)))?;
        Ok(CallToolResult::success(vec![
            ContentBlock::image(data, loaded.display_mime_type),
            ContentBlock::text(meta),
        ]))
    }

    /// Saves an image under the knowledge base: from `file` (a client file reference; downloaded over HTTPS only, never from private, loopback or link-local addresses, at most 25 MiB) or `image` (inline base64 with mimeType). The bytes must be PNG, JPEG, WebP or GIF and match every declared type and name. Goes to images/<fileName> (cover.png, then cover-2.png, …) unless `targetPath` names the file; an existing file is never replaced. Returns {path, mimeType, bytes, sha256, markdown}. Needs allow_writes.
    #[tool(
        name = "kb_save_image",
        annotations(read_only_hint = false, destructive_hint = false, open_world_hint = true),
        meta = file_params_meta()
    )]
    async fn kb_save_image(
        &self,
        Parameters(args): Parameters<SaveImageArgs>,
    ) -> Result<Json<folio_core::host::images::SaveImageOutput>, ToolError> {
        json(&self.kb, move |kb| kb.save_image(&args)).await
    }

    /// Deletes one image file. Markdown that shows it is not changed (check for references first); its folder stays. Returns {path, deleted: true}. Needs allow_writes.
    #[tool(
        name = "kb_delete_image",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_delete_image(
        &self,
        Parameters(args): Parameters<DeleteImageArgs>,
    ) -> Result<Json<folio_core::host::images::DeleteImageOutput>, ToolError> {
        json(&self.kb, move |kb| kb.delete_image(&args)).await
    }

    /// Moves or renames one image inside the knowledge base (same format's extension; the target must not exist). `expectedSha256` guards against a changed file (CONFLICT). Markdown references are not changed unless `update_links` is true, which rewrites them like kb_move, all or nothing. Returns {previousPath, path, sha256}. Needs allow_writes.
    #[tool(
        name = "kb_move_image",
        annotations(read_only_hint = false, destructive_hint = true)
    )]
    async fn kb_move_image(
        &self,
        Parameters(args): Parameters<MoveImageArgs>,
    ) -> Result<Json<folio_core::host::images::MoveImageOutput>, ToolError> {
        json(&self.kb, move |kb| kb.move_image(&args)).await
    }

    /// Renders a Markdown document as a formatted PDF book (headings with a table of contents and PDF bookmarks, emphasis, code, lists, quotes, links, GFM tables, local images; Japanese and Chinese text). pageFormat a4|a5|a6|b5|letter (default a5), style compact|classic|modern|technical|academic (default compact), profile screen|standard|print (image resolution and JPEG quality; default standard). Missing images become placeholders listed in `warnings`; remote images are never fetched. Writes outputPath (default: the document's path with .pdf), replacing an earlier PDF atomically. Returns {path, bytes, warnings}. Needs allow_writes.
    #[tool(
        name = "kb_create_pdf_book",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn kb_create_pdf_book(
        &self,
        Parameters(args): Parameters<folio_core::host::book::PdfBookArgs>,
    ) -> Result<Json<folio_core::host::book::PdfBookOutput>, ToolError> {
        json(&self.kb, move |kb| kb.create_pdf_book(&args)).await
    }

    /// Returns the best-practice document for a target (e.g. claude-code) from the path templates in folio.toml `[best_practice] path_templates`, or with `category` its level-2 section of that name (or the file a `{category}` template names). NOT_CONFIGURED when the workspace has no templates.
    #[tool(name = "kb_best_practice", annotations(read_only_hint = true))]
    async fn kb_best_practice(
        &self,
        Parameters(args): Parameters<folio_core::host::best_practice::BestPracticeArgs>,
    ) -> Result<Json<folio_core::host::best_practice::BestPracticeOutput>, ToolError> {
        json(&self.kb, move |kb| kb.best_practice(&args)).await
    }

    /// KnowledgePulse: searches reusable agent skills (SKILL.md files in the knowledge base and in your private folder, and the network registry's when one is configured) with folio's hybrid search, English or Japanese. Filters: domain, tags (any of), min_quality (default 0.7), limit 1-20 (default 5). Returns {results: [{id, name, description, domain, tags, quality_score, content, visibility, origin (local | registry), path, uri}], mode, indexing, registry_error (when the registry part failed)}.
    #[tool(name = "kp_search_skill", annotations(read_only_hint = true))]
    async fn kp_search_skill(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::SearchSkillArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::SearchSkillOutput>, ToolError> {
        let access = self.private_access(&context);
        json(&self.kb, move |kb| kb.kp_search_skill(&args, access)).await
    }

    /// KnowledgePulse: searches knowledge units (ReasoningTrace, ToolCallPattern, ExpertSOP) with folio's hybrid search, English or Japanese, here and in the network registry when one is configured. Filters: types, domain, schema_version, min_quality (default 0.75), limit 1-10 (default 5). Returns {results: [{id, type, domain, title, schema_version, quality_score, content (the unit JSON), visibility, origin (local | registry), path, uri}], mode, indexing, registry_error (when the registry part failed)}.
    #[tool(name = "kp_search_knowledge", annotations(read_only_hint = true))]
    async fn kp_search_knowledge(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::SearchKnowledgeArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::SearchKnowledgeOutput>, ToolError> {
        let access = self.private_access(&context);
        json(&self.kb, move |kb| kb.kp_search_knowledge(&args, access)).await
    }

    /// KnowledgePulse: contributes a SKILL.md (frontmatter name and description required; at most 256 KiB). visibility `org` writes skills/<name>/SKILL.md into the knowledge base, `private` keeps it in your data folder, `network` (the default) sends it to the registry of `[knowledge] registry` (NOT_CONFIGURED without one, UNAVAILABLE when it cannot be reached; nothing is written locally). Writes a stable id into the frontmatter when it has none and records the contribution in the ledger. Returns {id, quality_score, visibility, path}. Needs allow_writes.
    #[tool(
        name = "kp_contribute_skill",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn kp_contribute_skill(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::ContributeSkillArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::ContributeSkillOutput>, ToolError> {
        let agent = self.agent(&context)?;
        let access = self.private_access(&context);
        json(&self.kb, move |kb| {
            kb.kp_contribute_skill(&agent, &args, access)
        })
        .await
    }

    /// KnowledgePulse: contributes a knowledge unit, validated against JSON Schema 1.0 (errors name the JSON pointer and the rule). visibility `org` writes knowledge/units/<id>.md into the knowledge base, `private` keeps it in your data folder, `network` sends it to the registry of `[knowledge] registry` (NOT_CONFIGURED without one, UNAVAILABLE when it cannot be reached). Returns {id, quality_score, visibility, path}. Needs allow_writes.
    #[tool(
        name = "kp_contribute_knowledge",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn kp_contribute_knowledge(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::ContributeKnowledgeArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::ContributeKnowledgeOutput>, ToolError> {
        let agent = self.agent(&context)?;
        let access = self.private_access(&context);
        json(&self.kb, move |kb| {
            kb.kp_contribute_knowledge(&agent, &args, access)
        })
        .await
    }

    /// KnowledgePulse: records your verdict (valid true/false, optional feedback) on another agent's unit (or skill) in the ledger; it moves the unit's quality_score and its contributor's reputation. An id not found here goes to the network registry when one is configured (judged there as its token's agent). NOT_FOUND for an unknown id, PERMISSION_DENIED for your own unit. Returns {validated: true, quality_score, origin (registry, when forwarded)}. Needs allow_writes.
    #[tool(
        name = "kp_validate_unit",
        annotations(read_only_hint = false, destructive_hint = false)
    )]
    async fn kp_validate_unit(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::ValidateArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::ValidateOutput>, ToolError> {
        let agent = self.agent(&context)?;
        let access = self.private_access(&context);
        json(&self.kb, move |kb| {
            kb.kp_validate_unit(&agent, &args, access)
        })
        .await
    }

    /// KnowledgePulse: an agent's reputation, (P + 1) / (P + N + 2) over the verdicts of others on its contributions, and how many skills and units it contributed; with a network registry configured, its ledger and the registry's added. Returns {score, contributions, positive_verdicts, negative_verdicts, local, registry, registry_error}.
    #[tool(name = "kp_reputation_query", annotations(read_only_hint = true))]
    async fn kp_reputation_query(
        &self,
        Parameters(args): Parameters<folio_core::host::knowledge::ReputationArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<folio_core::host::knowledge::ReputationOutput>, ToolError> {
        let access = self.private_access(&context);
        json(&self.kb, move |kb| kb.kp_reputation(&args, access)).await
    }
}

/// The tool metadata that tells OpenAI clients `file` is a file parameter
/// (`openai/fileParams`), so they pass an uploaded file's reference there.
fn file_params_meta() -> rmcp::model::MetaObject {
    let mut meta = rmcp::model::MetaObject::new();
    meta.0
        .insert("openai/fileParams".into(), serde_json::json!(["file"]));
    meta
}

#[prompt_router]
impl FolioServer {
    /// Summarise what the knowledge base says about a topic, citing paths.
    #[prompt(name = "summarize_topic")]
    async fn summarize_topic(
        &self,
        Parameters(args): Parameters<prompts::TopicArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            prompts::summarize_topic(&args.topic),
        )]
    }

    /// Answer a question thoroughly: search, follow links, read sources, search again with new vocabulary.
    #[prompt(name = "deep_dive")]
    async fn deep_dive(
        &self,
        Parameters(args): Parameters<prompts::QuestionArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            prompts::deep_dive(&args.question),
        )]
    }

    /// Survey documents dated since a day (frontmatter `date`, default 30 days ago).
    #[prompt(name = "whats_new")]
    async fn whats_new(
        &self,
        Parameters(args): Parameters<prompts::SinceArgs>,
    ) -> Result<Vec<PromptMessage>, rmcp::ErrorData> {
        if let Some(since) = args.since.as_deref() {
            folio_core::search::filter::validate_date("since", since)
                .map_err(|m| rmcp::ErrorData::invalid_params(m, None))?;
        }
        Ok(vec![PromptMessage::new_text(
            Role::User,
            prompts::whats_new(args.since.as_deref()),
        )])
    }

    /// Find what the knowledge base is missing or thin on, without writing the content.
    #[prompt(name = "find_gaps")]
    async fn find_gaps(
        &self,
        Parameters(args): Parameters<prompts::OptionalTopicArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            prompts::find_gaps(args.topic.as_deref()),
        )]
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for FolioServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("folio", env!("CARGO_PKG_VERSION")))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
        .with_instructions(prompts::INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    /// -32601: folio speaks the handshake-era protocol (up to 2025-11-25), so clients that
    /// probe with `server/discover` fall back to `initialize` (over stdio [`Served`] does
    /// the same before rmcp's dispatch; over HTTP this is the only place).
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Err(ErrorData::method_not_found::<DiscoverRequestMethod>())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Over HTTP, the bearer token's scope: a read-only token's writes are refused here,
        // before the tool runs.
        if let Some(caller) = Caller::of(&context.extensions) {
            if let Some(err) = caller.refuse(&request.name) {
                return Ok(refused(err));
            }
            if WRITING_TOOLS.contains(&&*request.name) {
                // Quoted: an agent id may hold spaces, which must not read as other fields.
                tracing::info!(agent = ?caller.agent, token = ?caller.token_id, tool = %request.name, "write requested");
            }
        }
        // A folio registry client calling a server that is not a registry (a client pointed
        // at itself, or at another client): refused, so that calls never loop.
        if request.name.starts_with("kp_")
            && !self.kb.serves_registry()
            && context
                .extensions
                .get::<axum::http::request::Parts>()
                .is_some_and(|parts| {
                    parts
                        .headers
                        .contains_key(crate::registry::REGISTRY_CLIENT_HEADER)
                })
        {
            return Ok(refused(HostError::new(
                ErrorCode::NotConfigured,
                "this folio server is not a KnowledgePulse registry (its user's configuration does not set `[knowledge] serve_registry = true`); point `[knowledge] registry` at a registry",
            )));
        }
        let mut request = request;
        if let (Some(arguments), Some(tool)) = (
            request.arguments.as_mut(),
            self.tool_router.get(&request.name),
        ) {
            crate::arguments::whole_numbers_as_integers(arguments, &tool.input_schema);
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let mut response = self.tool_router.call(tcc).await?;
        // Arguments that do not fit the schema come back from rmcp as plain text; give them
        // the same `{code, message}` body as every other tool failure.
        if let CallToolResponse::Complete(result) = &mut response
            && result.is_error == Some(true)
            && let Some(text) = result
                .content
                .first()
                .and_then(|c| c.as_text())
                .map(|t| t.text.clone())
            && text.starts_with("failed to deserialize parameters")
        {
            result.content = ToolError(HostError::invalid(crate::arguments::plain_wording(&text)))
                .into_contents();
        }
        Ok(response)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let groups = blocking(&self.kb, Host::topic_groups)
            .await
            .map_err(to_protocol)?;
        let resources = groups
            .into_iter()
            .map(|g| {
                let name = if g.prefix.is_empty() {
                    "(root)".to_string()
                } else {
                    g.prefix.clone()
                };
                Resource::new(folio_core::host::topic_uri(&g.prefix), name)
                    .with_description(format!(
                        "{} indexed documents under `{}`",
                        g.count,
                        if g.prefix.is_empty() { "/" } else { &g.prefix }
                    ))
                    .with_mime_type("text/markdown")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let t = ResourceTemplate::new("kb://doc/{+path}", "document")
            .with_description("One indexed document by its KB-relative path (percent-encoded, `/` kept): Markdown as text/markdown; a PDF, Office file, spreadsheet, text or source file as its extracted text, text/plain.")
            .with_mime_type("text/markdown");
        Ok(ListResourceTemplatesResult::with_all_items(vec![t]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let res = blocking(&self.kb, move |kb| kb.read_resource(&uri))
            .await
            .map_err(to_protocol)?;
        let contents = match res {
            Contents::Markdown(text) => {
                ResourceContents::text(text, request.uri).with_mime_type("text/markdown")
            }
            Contents::Text(text) => {
                ResourceContents::text(text, request.uri).with_mime_type("text/plain")
            }
            Contents::Blob(data, mime_type) => {
                use base64::Engine;
                let blob = base64::engine::general_purpose::STANDARD.encode(&data);
                ResourceContents::blob(blob, request.uri).with_mime_type(mime_type)
            }
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

fn to_protocol(err: HostError) -> ErrorData {
    match err.code {
        ErrorCode::NotFound | ErrorCode::InvalidPath => {
            ErrorData::resource_not_found(err.message, None)
        }
        ErrorCode::InvalidArgument | ErrorCode::UnsupportedFormat => {
            ErrorData::invalid_params(err.message, None)
        }
        _ => ErrorData::internal_error(err.message, None),
    }
}

/// The served handler: [`FolioServer`] plus the answer -32601 to `server/discover`.
#[derive(Clone)]
pub struct Served(pub FolioServer);

impl Service<RoleServer> for Served {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ServerResult, ErrorData> {
        if matches!(request, ClientRequest::DiscoverRequest(_)) {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        self.0.handle_request(request, context).await
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        <FolioServer as Service<RoleServer>>::handle_notification(&self.0, notification, context)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}

/// Serves MCP over stdin/stdout until the client disconnects; `network` says what
/// `visibility: network` means (no registry, this host is one, or a registry client).
///
/// Starts an incremental reindex in the background first, and follows the root's
/// changes from then on (`[index].watch`); tools answer meanwhile.
pub async fn serve_stdio(
    options: Options,
    agent_id: Option<String>,
    network: folio_core::host::registry::KnowledgeNetwork,
) -> anyhow::Result<()> {
    let kb = Arc::new(Host::open(options)?.with_knowledge_network(network));
    tracing::info!(root = %kb.root().display(), allow_writes = kb.allow_writes(), "folio mcp starting");
    if let Err(e) = kb.start_reindex(false) {
        tracing::warn!(error = %e.message, "initial reindex did not start");
    }
    kb.start_watching();
    let server = Served(FolioServer::new(kb).with_agent_id(agent_id));
    let (io, writer) = crate::transport::filtered(tokio::io::stdin(), tokio::io::stdout());
    let running = match server.serve(io).await {
        Ok(running) => running,
        Err(e) => {
            // The replies already sent (a parse error for a garbage line, say) are
            // flushed before the process exits.
            let _ = writer.await;
            return Err(initialize_failure(e));
        }
    };
    let reason = running.waiting().await?;
    // The writer ends when rmcp's output closes; wait so the last replies are flushed.
    let _ = writer.await;
    tracing::info!(?reason, "folio mcp stopped");
    Ok(())
}

/// Why `folio mcp` stopped before a session began, in words for the person who started it.
fn initialize_failure(e: rmcp::service::ServerInitializeError) -> anyhow::Error {
    use rmcp::service::ServerInitializeError as E;
    match e {
        E::ConnectionClosed(_) => anyhow::anyhow!(
            "the input ended before an MCP initialize request arrived (an MCP client sends one \
             first; docs/mcp.md shows how to start folio mcp from a client)"
        ),
        E::ExpectedInitializeRequest(Some(msg)) => anyhow::anyhow!(
            "the first message was not an MCP initialize request: {}",
            serde_json::to_string(&msg).unwrap_or_default()
        ),
        e => e.into(),
    }
}

/// A tool call refused before the tool runs: the `{code, message}` body of every tool
/// failure, without structured content.
fn refused(err: HostError) -> CallToolResponse {
    let mut result = CallToolResult::error(ToolError(err).into_contents());
    result.structured_content = None;
    result.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_tool_fails_that_call_only() {
        let dir = tempfile::tempdir().unwrap();
        let kb = Arc::new(
            Host::open(Options {
                root: dir.path().into(),
                db: None,
                allow_writes: false,
                embed: Err("embeddings are off in this test".into()),
                fetch: Default::default(),
                rerank: Ok(None),
            })
            .unwrap(),
        );
        let res: HostResult<()> = blocking(&kb, |_| panic!("boom")).await;
        assert_eq!(
            serde_json::to_value(res.unwrap_err()).unwrap(),
            serde_json::json!({"code": "INTERNAL", "message": "internal error: the tool panicked (this is a bug in folio)"})
        );
        // The next call works.
        assert!(blocking(&kb, |kb| kb.status()).await.is_ok());
    }

    #[test]
    fn writing_tools_are_exactly_the_tools_that_may_change_files() {
        let dir = tempfile::tempdir().unwrap();
        let kb = Arc::new(
            Host::open(Options {
                root: dir.path().into(),
                db: None,
                allow_writes: false,
                embed: Err("embeddings are off in this test".into()),
                fetch: Default::default(),
                rerank: Ok(None),
            })
            .unwrap(),
        );
        let server = FolioServer::new(kb);
        let mut not_read_only: Vec<String> = server
            .tool_router
            .list_all()
            .into_iter()
            .filter(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(false))
            .map(|t| t.name.to_string())
            .collect();
        not_read_only.sort();
        let mut expected: Vec<String> = WRITING_TOOLS.iter().map(|t| t.to_string()).collect();
        // kb_reindex rebuilds the index from the files; it changes no file.
        expected.push("kb_reindex".into());
        expected.sort();
        assert_eq!(not_read_only, expected);
    }

    #[test]
    fn every_tool_has_an_output_schema_and_described_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let kb = Arc::new(
            Host::open(Options {
                root: dir.path().into(),
                db: None,
                allow_writes: false,
                embed: Err("embeddings are off in this test".into()),
                fetch: Default::default(),
                rerank: Ok(None),
            })
            .unwrap(),
        );
        let server = FolioServer::new(kb);
        let tools = server.tool_router.list_all();
        assert_eq!(tools.len(), 28);
        for t in &tools {
            // kb_load_image answers with an image block and text, without structured
            // content, so it declares no output schema.
            assert_eq!(
                t.output_schema.is_some(),
                t.name != "kb_load_image",
                "{}",
                t.name
            );
            // Only formats JSON Schema defines (schemars writes `uint32` and the like),
            // and no type arrays (nullable fields are `anyOf`).
            for schema in std::iter::once(&t.input_schema).chain(&t.output_schema) {
                let text = serde_json::to_string(&**schema).unwrap();
                assert!(!text.contains("\"type\":["), "{}: {text}", t.name);
                for format in text.split("\"format\":\"").skip(1) {
                    let format = format.split('"').next().unwrap();
                    assert!(
                        folio_core::host::schema::STANDARD_FORMATS.contains(&format),
                        "{}: format {format}",
                        t.name
                    );
                }
            }
            let schema = serde_json::to_value(&*t.input_schema).unwrap();
            for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
                assert!(
                    prop.get("description").is_some()
                        || prop.get("$ref").is_some()
                        || prop.get("allOf").is_some()
                        || prop.get("anyOf").is_some(),
                    "{}.{name}",
                    t.name
                );
            }
        }
    }
}
