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
    <name>AskSourcesModel</name>
    <message>
        <source>[{0}] {1}, page {2} · {3}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[{0}] {1} · {2}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AskView</name>
    <message>
        <source>This base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All bases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answer from the selected knowledge base or all of them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model that answers: PROVIDER:MODEL of an OpenAI-compatible or Ollama provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chat model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rewrite follow-up questions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Before searching, the chat model turns the question into a standalone query (a setting of this knowledge base)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask a question about your documents</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clear</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forget this knowledge base&apos;s conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answers cite the passages they come from as [1], [2] …; click a number to read the passage in its document.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sources</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a chat model first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searching the documents…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the chat model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n citation(s) pointed to no passage and were removed.</source>
        <translation>
            <numerusform>%n citation pointed to no passage and was removed.</numerusform>
            <numerusform>%n citations pointed to no passage and were removed.</numerusform>
        </translation>
    </message>
    <message>
        <source>Rewritten: {0} · {1} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retrieval {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n passage(s)</source>
        <translation>
            <numerusform>%n passage</numerusform>
            <numerusform>%n passages</numerusform>
        </translation>
    </message>
    <message>
        <source>First token {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total {0} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer broke off here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AttachBaseDialog</name>
    <message>
        <source>Attach a shared knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use a knowledge base that another desktop created on a PostgreSQL server. Its items and index stay on the server, shared with everyone who uses it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its ID, if the server holds several</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Knowledge base:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Knowledge base “{0}” attached from {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No such knowledge base on this server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server holds no Trove knowledge base with that ID. Check the address (the database too) and the ID.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server holds no Trove knowledge base. Check the address, the database too.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (ID {1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This server holds several knowledge bases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose one below, then attach it.</source>
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
    <message>
        <source>Shared on the PostgreSQL server {0}</source>
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
        <source>Let agents&apos; web pages reach this computer and local network</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Off: web pages that agents add here, and those of an imported base, may only come from public internet addresses, never from localhost, your network or a cloud metadata service. Pages you add yourself may come from anywhere.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pause computing vectors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Documents are searchable by their words as soon as they are read; their vectors are computed afterwards. Pausing keeps the machine free (also after a restart) until you switch it off again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compute vectors again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attach a shared knowledge base…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use a knowledge base that another desktop created on a PostgreSQL server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Detach from this desktop…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop using this shared knowledge base here; it stays on its server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Computing vectors stopped: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Added %n source(s) to “{0}”</source>
        <translation>
            <numerusform>Added %n source to “{0}”</numerusform>
            <numerusform>Added %n sources to “{0}”</numerusform>
        </translation>
    </message>
    <message>
        <source>Stop using “{0}” on this desktop?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It stays on the server {0} for everyone who uses it, and you can attach it again. Trove&apos;s copies of the files added from this desktop are removed here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Detach knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It is deleted from the server {0} for everyone who uses it, not only on this desktop. To stop using it here only, choose “Detach from this desktop” instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>It holds %n document(s).</source>
        <translation>
            <numerusform>It holds %n document.</numerusform>
            <numerusform>It holds %n documents.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Its %n note(s) exist only in Trove and are deleted too.</source>
        <translation>
            <numerusform>Its %n note exists only in Trove and is deleted too.</numerusform>
            <numerusform>Its %n notes exist only in Trove and are deleted too.</numerusform>
        </translation>
    </message>
    <message>
        <source>The original files on your disk are kept: only Trove&apos;s copies, the index and the base&apos;s settings are removed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the shared knowledge base “{0}” for everyone?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the knowledge base “{0}”?</source>
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
        <source>Open original</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}, page {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open at page {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Loading the document…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Page {0}</source>
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
        <source>The vectors of this knowledge base are still being computed; the documents without them are found by their words meanwhile</source>
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
    <message>
        <source>Vectors for {0}% of chunks</source>
        <translation type="unfinished"></translation>
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
    <message numerus="yes">
        <source>%n knowledge base(s)</source>
        <translation>
            <numerusform>%n knowledge base</numerusform>
            <numerusform>%n knowledge bases</numerusform>
        </translation>
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
    <name>DeferredDeletes</name>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DownloadStrip</name>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the download; what was downloaded is kept for a later resume.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloading {0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (and {1} more waiting)</source>
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
    <name>FileFormats</name>
    <message>
        <source>Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Word</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PowerPoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Excel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON Lines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Template</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FilePicking</name>
    <message>
        <source>Documents ({0})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All files (*)</source>
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
        <source>Recognising text {0}/{1} pages</source>
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
        <source>Undo delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit note…</source>
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
        <source>Copy to…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move to…</source>
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
    <message>
        <source>This note is still being indexed; edit it once it has finished.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only notes can be edited here. Files are renamed on disk, then reindexed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete “{0}” from “{1}”?</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s) from “{0}”?</source>
        <translation>
            <numerusform>Delete %n item from “{0}”?</numerusform>
            <numerusform>Delete %n items from “{0}”?</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>It holds %n document(s).</source>
        <translation>
            <numerusform>It holds %n document.</numerusform>
            <numerusform>It holds %n documents.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Together they hold %n document(s).</source>
        <translation>
            <numerusform>Together they hold %n document.</numerusform>
            <numerusform>Together they hold %n documents.</numerusform>
        </translation>
    </message>
    <message>
        <source>The original files on your disk are kept: only Trove&apos;s copies and their index entries are removed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only Trove&apos;s copies of the pages and their index entries are removed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Notes exist only in Trove: their text is deleted too.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You can undo this for a few seconds.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete items</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by name or title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n item(s)</source>
        <translation>
            <numerusform>Deleted %n item</numerusform>
            <numerusform>Deleted %n items</numerusform>
        </translation>
    </message>
    <message>
        <source>This knowledge base needs to be restored: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LinkedFolders</name>
    <message>
        <source>Link folder (keep in sync)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Link folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sync now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep in sync with its folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop keeping in sync</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sync changes…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LocalModelsModel</name>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kind</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dimensions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Licence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting to download…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping, then resuming…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting the download…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} of {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} · {1}</source>
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
        <source>Models…</source>
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
        <source>Ask</source>
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
        <source>%n item(s) are being indexed right now. Quit anyway? They stop and go back to the queue with the items still waiting, and are indexed the next time Trove runs; nothing already embedded is paid for again.</source>
        <translation>
            <numerusform>%n item is being indexed right now. Quit anyway? It stops and goes back to the queue with the items still waiting, and is indexed the next time Trove runs; nothing already embedded is paid for again.</numerusform>
            <numerusform>%n items are being indexed right now. Quit anyway? They stop and go back to the queue with the items still waiting, and are indexed the next time Trove runs; nothing already embedded is paid for again.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n model download(s) are running. Quit anyway? What was downloaded is kept, and the next download of the model resumes from it.</source>
        <translation>
            <numerusform>A model download is running. Quit anyway? What was downloaded is kept, and the next download of the model resumes from it.</numerusform>
            <numerusform>%n model downloads are running. Quit anyway? What was downloaded is kept, and the next download of the model resumes from it.</numerusform>
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
    <name>ModelLanguagesRow</name>
    <message>
        <source>This model covers:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chinese, Japanese and Korean searches use this model&apos;s vectors only if it covers those languages.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Looking…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (from {1})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not set: use what Trove knows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>English only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chinese and English</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Many languages (multilingual)</source>
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
        <source>{0} — download {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not configured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>On this computer (offline)</source>
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
        <source>Not on this computer yet: choosing it offers to download it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} — {1}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>None (full-text only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Built-in offline model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (on this computer)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelTexts</name>
    <message>
        <source>{0} B</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} KB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} MB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} GB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rerank</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>many languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>English</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Korean</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>German</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>French</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Spanish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Italian</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Portuguese</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Russian</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Arabic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hindi</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dutch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Polish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turkish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Vietnamese</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thai</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Indonesian</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ukrainian</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Swedish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not known</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Many languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>your setting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the model&apos;s manifest</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove&apos;s table of known models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nothing Trove knows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (non-commercial use only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} (built in)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>about {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Built in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Needs the local extra</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Installed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Damaged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paused, {0} kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not downloaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its runtime is not installed. Install Trove with the local extra (pip install &apos;trove[local]&apos;) to use it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model&apos;s folder is damaged or incomplete. Remove it, then download or import it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ships with Trove; English</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>small and fast; about 100 languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>best quality of the list; long inputs (8,192 tokens); about 100 languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tiny; Chinese first, English too</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reranker; about 100 languages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>reranker; about 100 languages; non-commercial use only (CC-BY-NC-4.0)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>imported from a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs on {0}, measured {1}× as fast as the CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs on the CPU (1 thread)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs on the CPU ({0} threads)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}; {1} could not run it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}; {1} measured {2}× as fast, so not used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0}; {1} is measured when the model is first used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Used by {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models that run on this computer, offline. A knowledge base uses them as its embedding or rerank model (“On this computer” in its settings).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Languages:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Install a model folder copied from another computer (it holds a trove-model.json and the files it names).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download mirror</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For example: https://hf-mirror.com</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Clear</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} is installed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The download of {0} failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} was removed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} could not be removed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove {0}?

Its files ({1}) are deleted from this computer. It can be downloaded or imported again later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} was imported; it replaces the copy installed before.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} was imported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder could not be imported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the folder of a model (it holds trove-model.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The mirror was not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resume download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The download goes on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The status bar shows it; open Models to cancel it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads come from {0}, set by the environment variable {1}; it overrides the setting here while it is set.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads come from {0}, your setting.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Downloads come from {0}, the default.</source>
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
        <source>This computer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PostgreSQL server (shared with a team)</source>
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
        <source>Where the index lives:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give the knowledge base a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to the server at {0} and creating the knowledge base…</source>
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
        <source>Edit note</source>
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
    <name>OpenFailedDialog</name>
    <message>
        <source>Could not open {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No application is set up to open it. It is at {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No application on this computer opened “{0}”. Copy its location, or open its folder and open it from there.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder could not be opened either: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>OriginalOpener</name>
    <message>
        <source>No application could open the original</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PageRefresh</name>
    <message>
        <source>Refresh now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh automatically</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Never</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every hour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every day</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every week</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PortableFlow</name>
    <message>
        <source>Exporting “{0}”…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Importing “{0}”…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No other knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create another knowledge base to copy or move items into.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) saved to {0}</source>
        <translation>
            <numerusform>%n document saved to {0}</numerusform>
            <numerusform>%n documents saved to {0}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n original file(s) were gone or outside their folder: those documents carry their text and index only.</source>
        <translation>
            <numerusform>%n original file was gone or outside its folder: that document carries its text and index only.</numerusform>
            <numerusform>%n original files were gone or outside their folder: those documents carry their text and index only.</numerusform>
        </translation>
    </message>
    <message>
        <source>Imported “{0}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) with their index and vectors.</source>
        <translation>
            <numerusform>%n item with its index and vectors.</numerusform>
            <numerusform>%n items with their index and vectors.</numerusform>
        </translation>
    </message>
    <message>
        <source>Imported “{0}” without its embedding model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its model {0} is not set up here, so search uses full text only. Set up the model, or choose another one to compute new vectors.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Moved %n item(s) to “{0}”</source>
        <translation>
            <numerusform>Moved %n item to “{0}”</numerusform>
            <numerusform>Moved %n items to “{0}”</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Copied %n item(s) to “{0}”</source>
        <translation>
            <numerusform>Copied %n item to “{0}”</numerusform>
            <numerusform>Copied %n items to “{0}”</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) are being indexed with its model.</source>
        <translation>
            <numerusform>%n document is being indexed with its model.</numerusform>
            <numerusform>%n documents are being indexed with its model.</numerusform>
        </translation>
    </message>
    <message>
        <source>Their index and vectors came along: nothing is computed again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing of it was kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove knowledge base (*.trovebase)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export “{0}” with where its documents came from?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file keeps, for every file and folder, its path on this computer (such as /home/you/Documents/…), so whoever receives the file can read your folder names. Web addresses and notes are part of the documents and stay. A Trove that imports the file only shows these paths; it never reads them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Leave out the paths of files and folders</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Put the original files of “{0}”&apos;s linked folders in the export?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its linked folders are indexed where they are: Trove keeps their text and index, not copies of the files. Without the originals, whoever imports the file can search and read the text but cannot open the files themselves; with them, the file grows by the size of those folders.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Include the originals</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text and index only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy to</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Knowledge base:</source>
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
        <source>e.g. siliconflow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No key stored — optional; local servers usually need none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A key is stored in the system keychain — type to replace it</source>
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
        <source>The built-in model works offline ({0} dimensions).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} answered with the rerank model {1}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} answered: {1} gives {2}-dimensional vectors.</source>
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
    <name>Questions</name>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Detach</source>
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
        <source>Recognise text in scanned PDF pages and pictures (OCR)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>English</source>
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
        <source>Languages:</source>
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
        <source> pages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Most pages of one document whose text is recognised.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recognise:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>At most:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pages without a usable text layer and pictures are read by the OCR models installed with Trove, a page at a time, in a background process.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text recognition is not installed: scans and pictures cannot be read. Install Trove with its OCR component to turn it on.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download a model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download {0}? It is about {1}. It is chosen here once it is installed; you can go on meanwhile.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Download</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The download of {0} failed</source>
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
    <message>
        <source>Add an embedding model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} and {1} more</source>
        <translation>{0} and {1} more</translation>
    </message>
    <message>
        <source>Gone: {0}.</source>
        <translation>Gone: {0}.</translation>
    </message>
    <message>
        <source>Remove the embedding model</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Removing {1} rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</source>
        <translation>
            <numerusform>Removing {1} rebuilds “{0}”: its %n item is indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</numerusform>
            <numerusform>Removing {1} rebuilds “{0}”: its %n items are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</numerusform>
        </translation>
    </message>
    <message>
        <source>Remove and rebuild</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change the embedding model</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Changing the embedding model from {1} to {2} rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies. Searches miss items until they finish.</source>
        <translation>
            <numerusform>Changing the embedding model from {1} to {2} rebuilds “{0}”: its %n item is indexed again from the base&apos;s own copies. Searches miss it until it finishes.</numerusform>
            <numerusform>Changing the embedding model from {1} to {2} rebuilds “{0}”: its %n items are indexed again from the base&apos;s own copies. Searches miss items until they finish.</numerusform>
        </translation>
    </message>
    <message>
        <source>Change and rebuild</source>
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
        <source>The original or the base&apos;s own copy of %n item(s) is missing; add them again.</source>
        <translation>
            <numerusform>The original or the base&apos;s own copy of %n item is missing; add it again.</numerusform>
            <numerusform>The original or the base&apos;s own copy of %n items is missing; add them again.</numerusform>
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
    <message>
        <source>OCR</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>text recognised from a scan or picture</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in {0}</source>
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
        <source>This base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All bases</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search the selected knowledge base or all of them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show passage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open original</source>
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
    <message numerus="yes">
        <source>%n knowledge base(s) could not be searched</source>
        <translation>
            <numerusform>%n knowledge base could not be searched</numerusform>
            <numerusform>%n knowledge bases could not be searched</numerusform>
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
        <source>Nothing in any knowledge base matches the query. Try other words.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No result contains your words; these are only loosely related.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No result contains your words; these were found by similar meaning and may not be related.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search all knowledge bases</source>
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
    <name>ServerFields</name>
    <message>
        <source>Leave empty if the server needs none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The password is kept in the system keychain. Without one, leave it empty and give it in PGPASSWORD or ~/.pgpass.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Server:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Password:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PostgreSQL support is not installed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Install it first: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This is not a PostgreSQL server address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write it like {0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The password cannot be kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No system keychain can keep the server&apos;s password on this computer. Leave the password empty and give it in PGPASSWORD or ~/.pgpass instead.</source>
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
        <source>Searchable · vectors {0}%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Searchable · vectors…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SyncLogDialog</name>
    <message>
        <source>Sync changes — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sync has changed anything yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  added: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  changed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  removed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  renamed: {0} → {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>  still being written: {0}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SyncTexts</name>
    <message>
        <source>Linked · syncing {0}/{1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linked · syncing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linked · sync problem</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linked · sync queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linked · watching</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Linked folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} added, {1} changed, {2} removed, {3} renamed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; {0} still being written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kept in sync with its folder (watched while Trove runs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kept in sync with its folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last synced: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not synced yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last changes: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sync problem: {0}</source>
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
    <name>ToastArea</name>
    <message>
        <source>Dismiss these notifications to see the next ones</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>+%n more</source>
        <translation>
            <numerusform>+%n more</numerusform>
            <numerusform>+%n more</numerusform>
        </translation>
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
    <name>_Run</name>
    <message>
        <source>Cancel</source>
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
        <source>Text recognition (OCR) is not installed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The picture is too large</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text recognition failed</source>
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
        <source>The PostgreSQL server cannot be used</source>
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
        <source>Already in this knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export file is damaged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export file needs a newer Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export file was not made by Trove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This came with an imported knowledge base</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model is busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The passages do not fit the chat model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer broke off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{0}” is used by these knowledge bases: {1}. Give them another model (or delete them) first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The downloaded file {0} does not match the checksum the model hub publishes, so it was deleted. Download again, or use another mirror.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} does not match the checksum its trove-model.json records: the copy is damaged or incomplete. Copy the folder again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server sent {0} with another size than the model hub announced, so it was deleted. Download again, or use another mirror.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server sent something other than the model file {0} (an error page?), so it was deleted. Use another mirror.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} is not a usable model file: it is empty, or of another kind.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another download, import or removal of “{0}” is running (in this or another Trove window or command). Wait for it to finish, then try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A file of “{0}” is in use. Stop the searches and indexing that use it (or close Trove), then try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is not enough free disk space: the model needs about {0} and {1} is free. Free some space, then try again (a download resumes where it stopped).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The disk filled up while the model was being written. Free some space, then try again (a download resumes where it stopped).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot reach {0}. Check the internet connection; or set a mirror of the model hub in the Models window (for example https://hf-mirror.com); or download the model on a connected computer, copy its folder here and import it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} is not a folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} has no trove-model.json. Choose the whole folder of an installed model (the folder Trove made for it in its data folder on another computer).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} lacks files its trove-model.json names: {1}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder&apos;s trove-model.json cannot be used: it is damaged, incomplete or of a newer Trove.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} does not have the file {1} of this model (HTTP 404): the mirror may not carry it. Try another mirror, or import the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The download from {0} stopped after several attempts. What was downloaded is kept: download again to resume it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} MB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model “{0}” is not available. Choose another one in the settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove could not connect to the PostgreSQL server at {0}, or it refused the login. Check the address, the password and that the server is running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No text could be extracted from this source. Is it empty, or only images?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove was closed, or the time limit ran out, while this item was being processed. Reindex it to finish.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The original file, folder or page is gone. Delete the item and add it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove cannot read text from this kind of source.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The source is larger than Trove indexes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading text from scans and pictures needs Trove&apos;s OCR component. Install Trove with it (the “ocr” extra), then reindex.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The picture has more pixels than Trove reads (it may be an image bomb). Scale it down, then add it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text could not be recognised on this document&apos;s pages (the recognition process stopped or ran out of memory). Reindex to try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file may be damaged, encrypted or not a text document. Check it, then reindex.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The embedding model could not compute vectors. Check the provider, then reindex.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The rerank model could not order the results.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider refused the API key. Check the key in the provider settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The system keychain could not store or read the API key.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server could not be reached or answered with an error. Try again later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None of the items inside could be indexed. Point at one to see why.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The disk that holds Trove&apos;s data is full. Free some space, then try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove&apos;s data folder cannot be written. Make it writable, then try again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This knowledge base has failed. Restore it from the settings panel.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It may have been deleted meanwhile.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the knowledge base by its ID instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type at least one word or number; punctuation and spaces alone cannot be searched.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The item is being changed by another action. Try again in a moment.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A value was not accepted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No configured provider offers this model. Check the model providers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The path leads outside the knowledge base&apos;s folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The index of this knowledge base is damaged. Restore rebuilds it from the base&apos;s own copies.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trove&apos;s catalog file cannot be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The PostgreSQL server of this knowledge base cannot be reached, or it refused the login. Check that the server is running and this computer may connect.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This source is already in the knowledge base.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The file is cut short, changed since it was exported, or not a Trove export. Nothing was imported; export the knowledge base again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It was exported by a newer version of Trove. Nothing was imported; update Trove, then import it again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It holds things no Trove export holds, such as commands that would run inside its index. It may have been made to attack; nothing was imported.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its source names a file, folder or page of the computer the knowledge base came from, so Trove does not read it. Add it again from this computer to keep it in sync or refresh it; reindexing uses the knowledge base&apos;s own copy.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing of it was kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model could not answer. Check the provider, then ask again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The question and the passages found are longer than the chat model can read, even with fewer passages. Ask a shorter question or choose a larger model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The connection to the chat model broke while it was answering. The part that arrived is kept; ask again for the rest.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model&apos;s provider asks to wait %n second(s) before the next question.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The chat model&apos;s provider gets too many requests. Wait a moment, then ask again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An unexpected error occurred.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing answered at {0}. Is the server running, and is the address right?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The host of {0} could not be found. Check the address and the network.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not connect to {0}. Check the address and the network.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} did not answer in time. Try again later.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} rejected the API key (HTTP {1}). Check the key.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} needs an API key (HTTP {1}), and none is set.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} answered HTTP 404: the model name is unknown or the base URL is wrong.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} has no model “{1}”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} lists no models. Type a model name first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} answered with an error (HTTP {1}).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} gave an answer Trove cannot read. Is the base URL right?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{0} answered in an unexpected format.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model “{0}” returned vectors of {1} dimensions instead of {2}. Restore the knowledge base to switch models.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https:// and name a host.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No system keychain is available to store the API key. Set the environment variable {0} to the key instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer took longer than {0} seconds and was cut off there. The part that arrived is kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer grew longer than {0} characters and was cut off there. The part that arrived is kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A file operation failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The same content is already in this knowledge base as {0}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The embedding model failed, so only full-text matching was used.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The rerank model was not asked, since the embedding model failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The rerank model failed, so the results keep their first order.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
