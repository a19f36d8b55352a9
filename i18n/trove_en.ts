<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>AddFlow</name>
    <message numerus="yes">
        <source>%n source(s) could not be added</source>
        <translation>
            <numerusform>%n source could not be added</numerusform>
            <numerusform>%n sources could not be added</numerusform>
        </translation>
    </message>
    <message>
        <source>Already in this knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n of the added sources are already in this knowledge base.</source>
        <translation>
            <numerusform>%n of the added sources is already in this knowledge base.</numerusform>
            <numerusform>%n of the added sources are already in this knowledge base.</numerusform>
        </translation>
    </message>
    <message>
        <source>Skip them, or replace them with fresh copies?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skip</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replace</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>BaseListModel</name>
    <message>
        <source>Needs restoring: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hybrid search with {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Full-text search only</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>BasesPanel</name>
    <message>
        <source>New knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Allow AI agents to change this base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agents connected through MCP may always search and read; with this on they may also add, delete and reindex items here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the knowledge base “{0}” with everything indexed in it? The original files are not touched.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChunkViewer</name>
    <message>
        <source>Passage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy passage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}, page {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the document…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This document is long; the part around the passage is shown.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChunksDialog</name>
    <message>
        <source>Chunks of {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n chunk(s)</source>
        <translation>
            <numerusform>%n chunk</numerusform>
            <numerusform>%n chunks</numerusform>
        </translation>
    </message>
    <message>
        <source>Chunk {0} · characters {1}–{2}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>page {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DebugStrip</name>
    <message>
        <source>How the knowledge base was searched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time to turn the query into a vector</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vector search: time and candidates found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Full-text (BM25) search: time and candidates found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time to merge the vector and full-text lists</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time the rerank model took</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time of the whole search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Vector {0} ms, %n hit(s)</source>
        <translation>
            <numerusform>Vector {0} ms, %n hit</numerusform>
            <numerusform>Vector {0} ms, %n hits</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>BM25 {0} ms, %n hit(s)</source>
        <translation>
            <numerusform>BM25 {0} ms, %n hit</numerusform>
            <numerusform>BM25 {0} ms, %n hits</numerusform>
        </translation>
    </message>
    <message>
        <source>Fusion {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rerank {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding model unavailable — keyword results only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reranker unavailable — results not reranked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hybrid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vector only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Full text</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <source>Welcome to Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A knowledge base collects your files, folders, web pages and notes and makes them searchable by meaning and by words — for you and for your AI tools. Everything stays on this computer.

Create a knowledge base, then drop documents onto it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create a knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set up model providers (optional)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ItemTreeModel</name>
    <message>
        <source>Preparing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Processing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Web page</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sitemap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chunks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Updated</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ItemsPanel</name>
    <message>
        <source>Filter by name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop files, folders or web links here, or use the Add buttons.
Trove reads them, splits them into chunks and indexes them for search.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add web page…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add sitemap…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New note…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reindex</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open original</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>View chunks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s) and their indexed content?</source>
        <translation>
            <numerusform>Delete %n item and their indexed content?</numerusform>
            <numerusform>Delete %n items and their indexed content?</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete items</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This knowledge base needs to be restored: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Content</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model providers…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connect AI agents…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} — Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restart Trove to use the new language.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove shows the new language after a restart. Restart now?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restart now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Later</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Trove {0}&lt;/b&gt;&lt;br&gt;Knowledge bases on your own computer: full-text and semantic search over your files, web pages and notes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} documents · {1} completed · {2} in progress · {3} failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) are being indexed right now. Quit anyway? They are marked interrupted and can be reindexed; items still waiting are indexed next time.</source>
        <translation>
            <numerusform>%n item is being indexed right now. Quit anyway? They is marked interrupted and can be reindexed; items still waiting is indexed next time.</numerusform>
            <numerusform>%n items are being indexed right now. Quit anyway? They are marked interrupted and can be reindexed; items still waiting are indexed next time.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>McpDialog</name>
    <message>
        <source>Connect AI agents</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add this entry to the “mcpServers” section of your MCP client&apos;s configuration (for example Claude Desktop). Agents can then search and read your knowledge bases; they can change a base only where you allow it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelListModel</name>
    <message>
        <source>None (full-text search only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No models listed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not configured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Built-in (offline)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (disabled)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add model names to this provider in the provider settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This provider is disabled in the provider settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No configured provider offers this model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} — {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NewBaseDialog</name>
    <message>
        <source>New knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For example: Research papers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the knowledge base a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Creating the knowledge base and checking {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Creating the knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Knowledge base “{0}” created</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NoteDialog</name>
    <message>
        <source>New note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write the note here (Markdown is fine)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProgressTexts</name>
    <message>
        <source>~{0} h {1} min left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>~{0} h left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>~{0} min left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a few seconds left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>~{0} s left</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n file(s)</source>
        <translation>
            <numerusform>{0} of %n file</numerusform>
            <numerusform>{0} of %n files</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n page(s)</source>
        <translation>
            <numerusform>{0} of %n page</numerusform>
            <numerusform>{0} of %n pages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n document(s)</source>
        <translation>
            <numerusform>{0} of %n document</numerusform>
            <numerusform>{0} of %n documents</numerusform>
        </translation>
    </message>
    <message>
        <source>{0} of {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Indexing {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) waiting</source>
        <translation>
            <numerusform>%n document waiting</numerusform>
            <numerusform>%n documents waiting</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Preparing %n folder(s) or sitemap(s)</source>
        <translation>
            <numerusform>Preparing %n folder or sitemap</numerusform>
            <numerusform>Preparing %n folders or sitemaps</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleting %n document(s)</source>
        <translation>
            <numerusform>Deleting %n document</numerusform>
            <numerusform>Deleting %n documents</numerusform>
        </translation>
    </message>
    <message>
        <source>{0}/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} documents/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All bases: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Idle</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProviderForm</name>
    <message>
        <source>The built-in model runs on this computer without a network connection. It needs no settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. SiliconFlow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Knowledge bases name this provider&apos;s models as ID:MODEL.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offer this provider&apos;s models to knowledge bases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ID</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a model name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models (checked ones are offered to knowledge bases)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. http://localhost:11434</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. https://api.jina.ai/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. https://api.openai.com/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Optional; local servers usually need none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kept in the system keychain — type to replace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>e.g. siliconflow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Network checks are unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The window was started without its asyncio event loop.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fetching the model list…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Testing the connection…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Found %n model(s)</source>
        <translation>
            <numerusform>Found %n model</numerusform>
            <numerusform>Found %n models</numerusform>
        </translation>
    </message>
    <message>
        <source>Check the models knowledge bases may use, then save.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider lists no models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type the model names below instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connection works</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not fetch the model list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The connection test failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https:// and name a host.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the provider a name or an ID.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ID cannot contain spaces or &apos;:&apos;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This ID is reserved for the built-in model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another provider already has this ID.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProviderKind</name>
    <message>
        <source>OpenAI-compatible</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ollama</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rerank (/v1/rerank)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Built-in (offline)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProvidersDialog</name>
    <message>
        <source>Model providers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove “{0}” and its stored API key? Knowledge bases that use its models cannot embed or rerank until another model is chosen.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ProvidersModel</name>
    <message>
        <source>{0} (off)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs on this computer; nothing to configure.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} at {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RagSettingsForm</name>
    <message>
        <source>Relevance threshold:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drop results scoring below</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applies to reranked relevance scores only; ranking scores are never filtered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The overlap must be smaller than the chunk size.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Full-text search ranks passages of this many tokens. With an embedding model, passages are also cut into chunks the model reads whole. Changes apply to content added or reindexed after saving.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How many results a search returns.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding model:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rerank model:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Document count:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chunk size:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chunk overlap:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searches use full-text matching (BM25) only.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searches combine full-text matching with this model&apos;s vectors (hybrid).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RagSettingsPanel</name>
    <message>
        <source>Revert</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checking the knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add vectors</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>“{0}” has %n item(s) indexed for full-text search only. Compute their vectors with {1}? Searches become hybrid as the items finish.</source>
        <translation>
            <numerusform>“{0}” has %n item indexed for full-text search only. Compute their vectors with {1}? Searches become hybrid as the items finish.</numerusform>
            <numerusform>“{0}” has %n items indexed for full-text search only. Compute their vectors with {1}? Searches become hybrid as the items finish.</numerusform>
        </translation>
    </message>
    <message>
        <source>Compute vectors</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Removing the embedding model rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</source>
        <translation>
            <numerusform>Removing the embedding model rebuilds “{0}”: its %n item is indexed again from the base&apos;s own copies for full-text search only, and the vectors is deleted.</numerusform>
            <numerusform>Removing the embedding model rebuilds “{0}”: its %n items are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Changing the embedding model rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies with {1}. Searches miss items until they finish.</source>
        <translation>
            <numerusform>Changing the embedding model rebuilds “{0}”: its %n item is indexed again from the base&apos;s own copies with {1}. Searches miss items until they finish.</numerusform>
            <numerusform>Changing the embedding model rebuilds “{0}”: its %n items are indexed again from the base&apos;s own copies with {1}. Searches miss items until they finish.</numerusform>
        </translation>
    </message>
    <message>
        <source>Restore the knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saving and rebuilding…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rebuilding “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) are being indexed again.</source>
        <translation>
            <numerusform>%n item is being indexed again.</numerusform>
            <numerusform>%n items are being indexed again.</numerusform>
        </translation>
    </message>
    <message>
        <source>Some items of “{0}” could not be rebuilt</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>The base&apos;s own copy of %n item(s) is missing; add them again.</source>
        <translation>
            <numerusform>The base&apos;s own copy of %n item is missing; add them again.</numerusform>
            <numerusform>The base&apos;s own copy of %n items is missing; add them again.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ResultDelegate</name>
    <message>
        <source>#{0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>page {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SearchResultsModel</name>
    <message>
        <source>relevance</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ranking</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SearchView</name>
    <message>
        <source>Search this knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No knowledge base selected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a knowledge base on the left to search it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n result(s)</source>
        <translation>
            <numerusform>%n result</numerusform>
            <numerusform>%n results</numerusform>
        </translation>
    </message>
    <message>
        <source>No results</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing in this knowledge base matches the query. Try other words.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type a query and press Enter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Words or a question; the most relevant passages are listed first.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StatusDelegate</name>
    <message>
        <source>{0} {1}%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Toast</name>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>UrlDialog</name>
    <message>
        <source>Add sitemap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sitemap address (every page it lists is added and kept together):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add web pages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Page addresses, one per line:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not a web address: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter an address that starts with http:// or https://</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter one sitemap address</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>errors</name>
    <message>
        <source>The file has no text that can be indexed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Indexing was interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The original is missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This file type is not supported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file is too large</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file could not be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The embedding model failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The rerank model failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The index is damaged — run restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The catalog is damaged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The system keychain is not available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider refused the API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The page could not be fetched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every item inside failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The knowledge base needs to be restored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The knowledge base no longer exists</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Several knowledge bases have this name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The item no longer exists</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The query has no searchable words</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The item is busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Invalid value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model is not available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unsafe path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The disk is full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The data folder is read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A file operation failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
