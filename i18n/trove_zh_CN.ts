<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AddFlow</name>
    <message numerus="yes">
        <source>%n source(s) could not be added</source>
        <translation>
            <numerusform>%n 个来源无法添加</numerusform>
        </translation>
    </message>
    <message>
        <source>Already in this knowledge base</source>
        <translation>已在此知识库中</translation>
    </message>
    <message numerus="yes">
        <source>%n of the added sources are already in this knowledge base.</source>
        <translation>
            <numerusform>添加的来源中有 %n 个已在此知识库中。</numerusform>
        </translation>
    </message>
    <message>
        <source>Skip them, or replace them with fresh copies?</source>
        <translation>跳过它们，还是用新的副本替换？</translation>
    </message>
    <message>
        <source>Skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>Replace</source>
        <translation>替换</translation>
    </message>
</context>
<context>
    <name>AskSourcesModel</name>
    <message>
        <source>[{0}] {1}, page {2} · {3}</source>
        <translation>[{0}] {1}，第 {2} 页 · {3}</translation>
    </message>
    <message>
        <source>[{0}] {1} · {2}</source>
        <translation>[{0}] {1} · {2}</translation>
    </message>
</context>
<context>
    <name>AskView</name>
    <message>
        <source>This base</source>
        <translation>此知识库</translation>
    </message>
    <message>
        <source>All bases</source>
        <translation>全部知识库</translation>
    </message>
    <message>
        <source>Answer from the selected knowledge base or all of them</source>
        <translation>根据所选知识库或全部知识库回答</translation>
    </message>
    <message>
        <source>The chat model that answers: PROVIDER:MODEL of an OpenAI-compatible or Ollama provider</source>
        <translation>回答问题的对话模型：兼容 OpenAI 或 Ollama 的服务商的 服务商:模型</translation>
    </message>
    <message>
        <source>Chat model</source>
        <translation>对话模型</translation>
    </message>
    <message>
        <source>Rewrite follow-up questions</source>
        <translation>改写追问</translation>
    </message>
    <message>
        <source>Before searching, the chat model turns the question into a standalone query (a setting of this knowledge base)</source>
        <translation>检索前由对话模型把问题改写成独立的查询（此知识库的设置）</translation>
    </message>
    <message>
        <source>Ask a question about your documents</source>
        <translation>就你的文档提一个问题</translation>
    </message>
    <message>
        <source>Ask</source>
        <translation>提问</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Forget this knowledge base&apos;s conversation</source>
        <translation>清除此知识库的对话记录</translation>
    </message>
    <message>
        <source>Answers cite the passages they come from as [1], [2] …; click a number to read the passage in its document.</source>
        <translation>回答以 [1]、[2] … 标注出处段落；点击编号可在原文中查看该段落。</translation>
    </message>
    <message>
        <source>Sources</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Choose a chat model first.</source>
        <translation>请先选择对话模型。</translation>
    </message>
    <message>
        <source>Searching the documents…</source>
        <translation>正在检索文档…</translation>
    </message>
    <message>
        <source>Waiting for the chat model…</source>
        <translation>正在等待对话模型…</translation>
    </message>
    <message numerus="yes">
        <source>%n citation(s) pointed to no passage and were removed.</source>
        <translation>
            <numerusform>有 %n 处引用没有对应的段落，已删除。</numerusform>
        </translation>
    </message>
    <message>
        <source>Rewritten: {0} · {1} ms</source>
        <translation>改写为：{0} · {1} 毫秒</translation>
    </message>
    <message>
        <source>Retrieval {0} ms</source>
        <translation>检索 {0} 毫秒</translation>
    </message>
    <message numerus="yes">
        <source>%n passage(s)</source>
        <translation>
            <numerusform>%n 个段落</numerusform>
        </translation>
    </message>
    <message>
        <source>First token {0} ms</source>
        <translation>首字 {0} 毫秒</translation>
    </message>
    <message>
        <source>Total {0} ms</source>
        <translation>总计 {0} 毫秒</translation>
    </message>
    <message>
        <source>The answer broke off here.</source>
        <translation>回答在此中断。</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
</context>
<context>
    <name>AttachBaseDialog</name>
    <message>
        <source>Attach a shared knowledge base</source>
        <translation>连接共享知识库</translation>
    </message>
    <message>
        <source>Use a knowledge base that another desktop created on a PostgreSQL server. Its items and index stay on the server, shared with everyone who uses it.</source>
        <translation>使用另一台电脑在 PostgreSQL 服务器上创建的知识库。它的条目和索引保存在服务器上，由所有使用者共享。</translation>
    </message>
    <message>
        <source>Its ID, if the server holds several</source>
        <translation>服务器上有多个知识库时，填写其 ID</translation>
    </message>
    <message>
        <source>Attach</source>
        <translation>连接</translation>
    </message>
    <message>
        <source>Knowledge base:</source>
        <translation>知识库：</translation>
    </message>
    <message>
        <source>Knowledge base “{0}” attached from {1}</source>
        <translation>已从 {1} 连接知识库“{0}”</translation>
    </message>
    <message>
        <source>No such knowledge base on this server</source>
        <translation>此服务器上没有这个知识库</translation>
    </message>
    <message>
        <source>The server holds no Trove knowledge base with that ID. Check the address (the database too) and the ID.</source>
        <translation>服务器上没有此 ID 的 Trove 知识库。请检查地址（包括数据库名）和 ID。</translation>
    </message>
    <message>
        <source>The server holds no Trove knowledge base. Check the address, the database too.</source>
        <translation>服务器上没有 Trove 知识库。请检查地址，包括数据库名。</translation>
    </message>
    <message>
        <source>{0} (ID {1})</source>
        <translation>{0}（ID {1}）</translation>
    </message>
    <message>
        <source>This server holds several knowledge bases</source>
        <translation>此服务器上有多个知识库</translation>
    </message>
    <message>
        <source>Choose one below, then attach it.</source>
        <translation>请在下方选择一个，然后连接。</translation>
    </message>
</context>
<context>
    <name>BaseListModel</name>
    <message>
        <source>Needs restoring: {0}</source>
        <translation>需要恢复：{0}</translation>
    </message>
    <message>
        <source>Hybrid search with {0}</source>
        <translation>使用 {0} 的混合检索</translation>
    </message>
    <message>
        <source>Full-text search only</source>
        <translation>仅全文检索</translation>
    </message>
    <message>
        <source>Shared on the PostgreSQL server {0}</source>
        <translation>共享于 PostgreSQL 服务器 {0}</translation>
    </message>
</context>
<context>
    <name>BasesPanel</name>
    <message>
        <source>New knowledge base…</source>
        <translation>新建知识库…</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Delete knowledge base…</source>
        <translation>删除知识库…</translation>
    </message>
    <message>
        <source>Allow AI agents to change this base</source>
        <translation>允许 AI 智能体修改此知识库</translation>
    </message>
    <message>
        <source>Agents connected through MCP may always search and read; with this on they may also add, delete and reindex items here.</source>
        <translation>通过 MCP 连接的智能体始终可以检索和阅读；开启后，它们还可以在此知识库中添加、删除和重新索引条目。</translation>
    </message>
    <message>
        <source>Let agents&apos; web pages reach this computer and local network</source>
        <translation>允许智能体添加的网页访问本机和局域网</translation>
    </message>
    <message>
        <source>Off: web pages that agents add here, and those of an imported base, may only come from public internet addresses, never from localhost, your network or a cloud metadata service. Pages you add yourself may come from anywhere.</source>
        <translation>关闭时：智能体在此添加的网页以及导入的知识库中的网页只能来自公共互联网地址，绝不会来自本机（localhost）、你的局域网或云元数据服务。你自己添加的网页不受此限制。</translation>
    </message>
    <message>
        <source>Pause computing vectors</source>
        <translation>暂停计算向量</translation>
    </message>
    <message>
        <source>Documents are searchable by their words as soon as they are read; their vectors are computed afterwards. Pausing keeps the machine free (also after a restart) until you switch it off again.</source>
        <translation>文档读取后即可按关键词检索；向量随后在后台计算。暂停后（重启也保持）不再占用机器，直到再次关闭此项。</translation>
    </message>
    <message>
        <source>Compute vectors again</source>
        <translation>重新计算向量</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Import knowledge base…</source>
        <translation>导入知识库…</translation>
    </message>
    <message>
        <source>Attach a shared knowledge base…</source>
        <translation>连接共享知识库…</translation>
    </message>
    <message>
        <source>Use a knowledge base that another desktop created on a PostgreSQL server</source>
        <translation>使用另一台电脑在 PostgreSQL 服务器上创建的知识库</translation>
    </message>
    <message>
        <source>Detach from this desktop…</source>
        <translation>在此电脑上断开…</translation>
    </message>
    <message>
        <source>Stop using this shared knowledge base here; it stays on its server</source>
        <translation>在此电脑上停止使用这个共享知识库；它仍保留在服务器上</translation>
    </message>
    <message>
        <source>Computing vectors stopped: {0}</source>
        <translation>向量计算已停止：{0}</translation>
    </message>
    <message numerus="yes">
        <source>Added %n source(s) to “{0}”</source>
        <translation>
            <numerusform>已将 %n 个来源添加到“{0}”</numerusform>
        </translation>
    </message>
    <message>
        <source>Stop using “{0}” on this desktop?</source>
        <translation>在此电脑上停止使用“{0}”？</translation>
    </message>
    <message>
        <source>It stays on the server {0} for everyone who uses it, and you can attach it again. Trove&apos;s copies of the files added from this desktop are removed here.</source>
        <translation>它仍保留在服务器 {0} 上供所有使用者使用，你也可以再次连接它。从此电脑添加的文件在 Trove 中的副本会从这里删除。</translation>
    </message>
    <message>
        <source>Detach knowledge base</source>
        <translation>断开知识库</translation>
    </message>
    <message>
        <source>It is deleted from the server {0} for everyone who uses it, not only on this desktop. To stop using it here only, choose “Detach from this desktop” instead.</source>
        <translation>它将从服务器 {0} 上删除，所有使用者都将失去它，而不只是这台电脑。若只想在这里停止使用，请改选“在此电脑上断开”。</translation>
    </message>
    <message numerus="yes">
        <source>It holds %n document(s).</source>
        <translation>
            <numerusform>其中有 %n 个文档。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Its %n note(s) exist only in Trove and are deleted too.</source>
        <translation>
            <numerusform>其中 %n 条笔记只存在于 Trove 中，也会一并删除。</numerusform>
        </translation>
    </message>
    <message>
        <source>The original files on your disk are kept: only Trove&apos;s copies, the index and the base&apos;s settings are removed.</source>
        <translation>磁盘上的原始文件会保留：只删除 Trove 中的副本、索引和这个知识库的设置。</translation>
    </message>
    <message>
        <source>This cannot be undone.</source>
        <translation>此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete the shared knowledge base “{0}” for everyone?</source>
        <translation>为所有人删除共享知识库“{0}”？</translation>
    </message>
    <message>
        <source>Delete the knowledge base “{0}”?</source>
        <translation>删除知识库“{0}”？</translation>
    </message>
    <message>
        <source>Delete knowledge base</source>
        <translation>删除知识库</translation>
    </message>
</context>
<context>
    <name>ChunkViewer</name>
    <message>
        <source>Passage</source>
        <translation>段落</translation>
    </message>
    <message>
        <source>Copy passage</source>
        <translation>复制段落</translation>
    </message>
    <message>
        <source>Open original</source>
        <translation>打开原件</translation>
    </message>
    <message>
        <source>{0}, page {1}</source>
        <translation>{0}，第 {1} 页</translation>
    </message>
    <message>
        <source>Open at page {0}</source>
        <translation>打开第 {0} 页</translation>
    </message>
    <message>
        <source>Loading the document…</source>
        <translation>正在加载文档…</translation>
    </message>
    <message>
        <source>Page {0}</source>
        <translation>第 {0} 页</translation>
    </message>
    <message>
        <source>This document is long; the part around the passage is shown.</source>
        <translation>文档较长，仅显示段落附近的部分。</translation>
    </message>
</context>
<context>
    <name>ChunksDialog</name>
    <message>
        <source>Chunks of {0}</source>
        <translation>{0} 的分块</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message numerus="yes">
        <source>%n chunk(s)</source>
        <translation>
            <numerusform>%n 个分块</numerusform>
        </translation>
    </message>
    <message>
        <source>Chunk {0} · characters {1}–{2}</source>
        <translation>分块 {0} · 字符 {1}–{2}</translation>
    </message>
    <message>
        <source>page {0}</source>
        <translation>第 {0} 页</translation>
    </message>
</context>
<context>
    <name>DebugStrip</name>
    <message>
        <source>How the knowledge base was searched</source>
        <translation>本次检索的方式</translation>
    </message>
    <message>
        <source>Time to turn the query into a vector</source>
        <translation>将查询转换为向量的耗时</translation>
    </message>
    <message>
        <source>Vector search: time and candidates found</source>
        <translation>向量检索：耗时与找到的候选数</translation>
    </message>
    <message>
        <source>The vectors of this knowledge base are still being computed; the documents without them are found by their words meanwhile</source>
        <translation>此知识库的向量仍在计算中；尚无向量的文档暂时按关键词检索</translation>
    </message>
    <message>
        <source>Full-text (BM25) search: time and candidates found</source>
        <translation>全文（BM25）检索：耗时与找到的候选数</translation>
    </message>
    <message>
        <source>Time to merge the vector and full-text lists</source>
        <translation>合并向量与全文结果列表的耗时</translation>
    </message>
    <message>
        <source>Time the rerank model took</source>
        <translation>重排序模型的耗时</translation>
    </message>
    <message>
        <source>Time of the whole search</source>
        <translation>整次检索的耗时</translation>
    </message>
    <message>
        <source>Embedding {0} ms</source>
        <translation>嵌入 {0} ms</translation>
    </message>
    <message numerus="yes">
        <source>Vector {0} ms, %n hit(s)</source>
        <translation>
            <numerusform>向量 {0} ms，命中 %n 条</numerusform>
        </translation>
    </message>
    <message>
        <source>Vectors for {0}% of chunks</source>
        <translation>{0}% 的分块已有向量</translation>
    </message>
    <message numerus="yes">
        <source>BM25 {0} ms, %n hit(s)</source>
        <translation>
            <numerusform>BM25 {0} ms，命中 %n 条</numerusform>
        </translation>
    </message>
    <message>
        <source>Fusion {0} ms</source>
        <translation>融合 {0} ms</translation>
    </message>
    <message>
        <source>Rerank {0} ms</source>
        <translation>重排序 {0} ms</translation>
    </message>
    <message>
        <source>Total {0} ms</source>
        <translation>总计 {0} ms</translation>
    </message>
    <message numerus="yes">
        <source>%n knowledge base(s)</source>
        <translation>
            <numerusform>%n 个知识库</numerusform>
        </translation>
    </message>
    <message>
        <source>Embedding model unavailable — keyword results only</source>
        <translation>嵌入模型不可用 — 仅显示关键词结果</translation>
    </message>
    <message>
        <source>Reranker unavailable — results not reranked</source>
        <translation>重排序模型不可用 — 结果未经重排序</translation>
    </message>
    <message>
        <source>Hybrid</source>
        <translation>混合</translation>
    </message>
    <message>
        <source>Vector only</source>
        <translation>仅向量</translation>
    </message>
    <message>
        <source>Full text</source>
        <translation>全文</translation>
    </message>
</context>
<context>
    <name>DeferredDeletes</name>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
</context>
<context>
    <name>DownloadStrip</name>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop the download; what was downloaded is kept for a later resume.</source>
        <translation>停止下载；已下载的部分会保留，以后可继续下载。</translation>
    </message>
    <message>
        <source>Downloading {0}: {1}</source>
        <translation>正在下载 {0}：{1}</translation>
    </message>
    <message>
        <source>{0} (and {1} more waiting)</source>
        <translation>{0}（另有 {1} 个在等待）</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <source>Welcome to Trove</source>
        <translation>欢迎使用 Trove</translation>
    </message>
    <message>
        <source>A knowledge base collects your files, folders, web pages and notes and makes them searchable by meaning and by words — for you and for your AI tools. Everything stays on this computer.

Create a knowledge base, then drop documents onto it.</source>
        <translation>知识库汇集你的文件、文件夹、网页和笔记，让你和你的 AI 工具都能按语义和关键词检索它们。所有内容都保存在这台电脑上。

先创建一个知识库，再把文档拖进来。</translation>
    </message>
    <message>
        <source>Create a knowledge base</source>
        <translation>创建知识库</translation>
    </message>
    <message>
        <source>Set up model providers (optional)</source>
        <translation>设置模型服务商（可选）</translation>
    </message>
</context>
<context>
    <name>FileFormats</name>
    <message>
        <source>Markdown</source>
        <translation>Markdown</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Word</source>
        <translation>Word 文档</translation>
    </message>
    <message>
        <source>PowerPoint</source>
        <translation>PowerPoint 演示文稿</translation>
    </message>
    <message>
        <source>Excel</source>
        <translation>Excel 表格</translation>
    </message>
    <message>
        <source>JSON Lines</source>
        <translation>JSON Lines</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置文件</translation>
    </message>
    <message>
        <source>Template</source>
        <translation>模板</translation>
    </message>
    <message>
        <source>{0} file</source>
        <translation>{0} 文件</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
</context>
<context>
    <name>FilePicking</name>
    <message>
        <source>Documents ({0})</source>
        <translation>文档 ({0})</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>ItemTreeModel</name>
    <message>
        <source>Preparing</source>
        <translation>准备中</translation>
    </message>
    <message>
        <source>Processing</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>Completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Deleting</source>
        <translation>删除中</translation>
    </message>
    <message>
        <source>Reading</source>
        <translation>读取中</translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation>嵌入中</translation>
    </message>
    <message>
        <source>Writing</source>
        <translation>写入中</translation>
    </message>
    <message>
        <source>Waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Recognising text {0}/{1} pages</source>
        <translation>正在识别文字 {0}/{1} 页</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>Web page</source>
        <translation>网页</translation>
    </message>
    <message>
        <source>Sitemap</source>
        <translation>站点地图</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>笔记</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Chunks</source>
        <translation>分块</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
</context>
<context>
    <name>ItemsPanel</name>
    <message>
        <source>Drop files, folders or web links here, or use the Add buttons.
Trove reads them, splits them into chunks and indexes them for search.</source>
        <translation>把文件、文件夹或网页链接拖到这里，或使用“添加”按钮。
Trove 会读取它们、切分成块并建立索引以供检索。</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Add web page…</source>
        <translation>添加网页…</translation>
    </message>
    <message>
        <source>Add sitemap…</source>
        <translation>添加站点地图…</translation>
    </message>
    <message>
        <source>New note…</source>
        <translation>新建笔记…</translation>
    </message>
    <message>
        <source>Reindex</source>
        <translation>重新索引</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Undo delete</source>
        <translation>撤销删除</translation>
    </message>
    <message>
        <source>Edit note…</source>
        <translation>编辑笔记…</translation>
    </message>
    <message>
        <source>Open original</source>
        <translation>打开原件</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
    <message>
        <source>View chunks</source>
        <translation>查看分块</translation>
    </message>
    <message>
        <source>Copy error</source>
        <translation>复制错误信息</translation>
    </message>
    <message>
        <source>Copy to…</source>
        <translation>复制到…</translation>
    </message>
    <message>
        <source>Move to…</source>
        <translation>移动到…</translation>
    </message>
    <message>
        <source>{0} failed</source>
        <translation>{0} 失败</translation>
    </message>
    <message>
        <source>Add files</source>
        <translation>添加文件</translation>
    </message>
    <message>
        <source>Add folder</source>
        <translation>添加文件夹</translation>
    </message>
    <message>
        <source>This note is still being indexed; edit it once it has finished.</source>
        <translation>这条笔记仍在索引中，请在完成后再编辑。</translation>
    </message>
    <message>
        <source>Only notes can be edited here. Files are renamed on disk, then reindexed.</source>
        <translation>这里只能编辑笔记。文件请在磁盘上重命名，然后重新索引。</translation>
    </message>
    <message>
        <source>Delete “{0}” from “{1}”?</source>
        <translation>从“{1}”中删除“{0}”？</translation>
    </message>
    <message numerus="yes">
        <source>Delete %n item(s) from “{0}”?</source>
        <translation>
            <numerusform>从“{0}”中删除 %n 个条目？</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>It holds %n document(s).</source>
        <translation>
            <numerusform>其中有 %n 个文档。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Together they hold %n document(s).</source>
        <translation>
            <numerusform>它们共包含 %n 个文档。</numerusform>
        </translation>
    </message>
    <message>
        <source>The original files on your disk are kept: only Trove&apos;s copies and their index entries are removed.</source>
        <translation>磁盘上的原始文件会保留：只删除 Trove 中的副本及其索引。</translation>
    </message>
    <message>
        <source>Only Trove&apos;s copies of the pages and their index entries are removed.</source>
        <translation>只删除 Trove 保存的网页副本及其索引。</translation>
    </message>
    <message>
        <source>Notes exist only in Trove: their text is deleted too.</source>
        <translation>笔记只存在于 Trove 中：其内容也会被删除。</translation>
    </message>
    <message>
        <source>You can undo this for a few seconds.</source>
        <translation>几秒钟内可以撤销。</translation>
    </message>
    <message>
        <source>Delete items</source>
        <translation>删除条目</translation>
    </message>
    <message>
        <source>Filter by name or title</source>
        <translation>按名称或标题筛选</translation>
    </message>
    <message>
        <source>Deleted “{0}”</source>
        <translation>已删除“{0}”</translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n item(s)</source>
        <translation>
            <numerusform>已删除 %n 个条目</numerusform>
        </translation>
    </message>
    <message>
        <source>This knowledge base needs to be restored: {0}</source>
        <translation>此知识库需要恢复：{0}</translation>
    </message>
</context>
<context>
    <name>LinkedFolders</name>
    <message>
        <source>Link folder (keep in sync)…</source>
        <translation>链接文件夹（保持同步）…</translation>
    </message>
    <message>
        <source>Link folder</source>
        <translation>链接文件夹</translation>
    </message>
    <message>
        <source>Sync now</source>
        <translation>立即同步</translation>
    </message>
    <message>
        <source>Keep in sync with its folder</source>
        <translation>与其文件夹保持同步</translation>
    </message>
    <message>
        <source>Stop keeping in sync</source>
        <translation>停止同步</translation>
    </message>
    <message>
        <source>Sync changes…</source>
        <translation>同步变更…</translation>
    </message>
</context>
<context>
    <name>LocalModelsModel</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Languages</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Dimensions</source>
        <translation>维度</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Waiting to download…</source>
        <translation>等待下载…</translation>
    </message>
    <message>
        <source>Stopping, then resuming…</source>
        <translation>正在停止，随后继续…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>Starting the download…</source>
        <translation>正在开始下载…</translation>
    </message>
    <message>
        <source>{0} of {1}</source>
        <translation>{0} / {1}</translation>
    </message>
    <message>
        <source>{0} · {1}</source>
        <translation>{0} · {1}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Trove</source>
        <translation>Trove</translation>
    </message>
    <message>
        <source>Content</source>
        <translation>内容</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Model providers…</source>
        <translation>模型服务商…</translation>
    </message>
    <message>
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <source>Connect AI agents…</source>
        <translation>连接 AI 智能体…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Ask</source>
        <translation>提问</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>About Trove</source>
        <translation>关于 Trove</translation>
    </message>
    <message>
        <source>System language</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Main toolbar</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <source>{0} — Trove</source>
        <translation>{0} — Trove</translation>
    </message>
    <message>
        <source>Language saved</source>
        <translation>语言已保存</translation>
    </message>
    <message>
        <source>Restart Trove to use the new language.</source>
        <translation>重新启动 Trove 后使用新的语言。</translation>
    </message>
    <message>
        <source>Trove shows the new language after a restart. Restart now?</source>
        <translation>Trove 重新启动后才会显示新的语言。现在重新启动吗？</translation>
    </message>
    <message>
        <source>Restart now</source>
        <translation>立即重启</translation>
    </message>
    <message>
        <source>Later</source>
        <translation>稍后</translation>
    </message>
    <message>
        <source>&lt;b&gt;Trove {0}&lt;/b&gt;&lt;br&gt;Knowledge bases on your own computer: full-text and semantic search over your files, web pages and notes.</source>
        <translation>&lt;b&gt;Trove {0}&lt;/b&gt;&lt;br&gt;保存在你自己电脑上的知识库：对文件、网页和笔记进行全文与语义检索。</translation>
    </message>
    <message>
        <source>{0} documents · {1} completed · {2} in progress · {3} failed</source>
        <translation>{0} 个文档 · {1} 个已完成 · {2} 个进行中 · {3} 个失败</translation>
    </message>
    <message>
        <source>Quit Trove</source>
        <translation>退出 Trove</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) are being indexed right now. Quit anyway? They stop and go back to the queue with the items still waiting, and are indexed the next time Trove runs; nothing already embedded is paid for again.</source>
        <translation>
            <numerusform>有 %n 个条目正在建立索引。仍要退出吗？它们会停下并与仍在等待的条目一起回到队列，在下次运行 Trove 时完成索引；已生成的向量不会重复付费。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n model download(s) are running. Quit anyway? What was downloaded is kept, and the next download of the model resumes from it.</source>
        <translation>
            <numerusform>有 %n 个模型正在下载。仍要退出吗？已下载的部分会保留，下次下载该模型时会从中断处继续。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>McpDialog</name>
    <message>
        <source>Connect AI agents</source>
        <translation>连接 AI 智能体</translation>
    </message>
    <message>
        <source>Add this entry to the “mcpServers” section of your MCP client&apos;s configuration (for example Claude Desktop). Agents can then search and read your knowledge bases; they can change a base only where you allow it.</source>
        <translation>把这一项加入 MCP 客户端配置（例如 Claude Desktop）的“mcpServers”部分。之后智能体就能检索和阅读你的知识库；只有你允许的知识库才能被它们修改。</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>ModelLanguagesRow</name>
    <message>
        <source>This model covers:</source>
        <translation>此模型支持：</translation>
    </message>
    <message>
        <source>Chinese, Japanese and Korean searches use this model&apos;s vectors only if it covers those languages.</source>
        <translation>只有此模型支持中文、日文和韩文时，这些语言的搜索才会使用它的向量。</translation>
    </message>
    <message>
        <source>Looking…</source>
        <translation>正在查询…</translation>
    </message>
    <message>
        <source>{0} (from {1})</source>
        <translation>{0}（来源：{1}）</translation>
    </message>
    <message>
        <source>Not set: use what Trove knows</source>
        <translation>未设置：使用 Trove 已知的信息</translation>
    </message>
    <message>
        <source>English only</source>
        <translation>仅英语</translation>
    </message>
    <message>
        <source>Chinese and English</source>
        <translation>中文和英语</translation>
    </message>
    <message>
        <source>Many languages (multilingual)</source>
        <translation>多种语言（多语言模型）</translation>
    </message>
</context>
<context>
    <name>ModelListModel</name>
    <message>
        <source>None (full-text search only)</source>
        <translation>无（仅全文检索）</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>No models listed</source>
        <translation>未列出模型</translation>
    </message>
    <message>
        <source>{0} — download {1}</source>
        <translation>{0} — 下载 {1}</translation>
    </message>
    <message>
        <source>Not configured</source>
        <translation>未配置</translation>
    </message>
    <message>
        <source>On this computer (offline)</source>
        <translation>本机（离线）</translation>
    </message>
    <message>
        <source>Built-in (offline)</source>
        <translation>内置（离线）</translation>
    </message>
    <message>
        <source>{0} (disabled)</source>
        <translation>{0}（已停用）</translation>
    </message>
    <message>
        <source>Add model names to this provider in the provider settings.</source>
        <translation>请在服务商设置中为此服务商添加模型名称。</translation>
    </message>
    <message>
        <source>This provider is disabled in the provider settings.</source>
        <translation>此服务商已在服务商设置中停用。</translation>
    </message>
    <message>
        <source>No configured provider offers this model.</source>
        <translation>没有已配置的服务商提供此模型。</translation>
    </message>
    <message>
        <source>Not on this computer yet: choosing it offers to download it.</source>
        <translation>尚未在本机：选择它时会提示下载。</translation>
    </message>
    <message>
        <source>{0} — {1}</source>
        <translation>{0} — {1}</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>None (full-text only)</source>
        <translation>无（仅全文检索）</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Built-in offline model</source>
        <translation>内置离线模型</translation>
    </message>
    <message>
        <source>{0} (on this computer)</source>
        <translation>{0}（本机）</translation>
    </message>
</context>
<context>
    <name>ModelTexts</name>
    <message>
        <source>{0} B</source>
        <translation>{0} B</translation>
    </message>
    <message>
        <source>{0} KB</source>
        <translation>{0} KB</translation>
    </message>
    <message>
        <source>{0} MB</source>
        <translation>{0} MB</translation>
    </message>
    <message>
        <source>{0} GB</source>
        <translation>{0} GB</translation>
    </message>
    <message>
        <source>{0}/s</source>
        <translation>{0}/秒</translation>
    </message>
    <message>
        <source>Rerank</source>
        <translation>重排序</translation>
    </message>
    <message>
        <source>Embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>many languages</source>
        <translation>多种语言</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英语</translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation>中文</translation>
    </message>
    <message>
        <source>Japanese</source>
        <translation>日语</translation>
    </message>
    <message>
        <source>Korean</source>
        <translation>韩语</translation>
    </message>
    <message>
        <source>German</source>
        <translation>德语</translation>
    </message>
    <message>
        <source>French</source>
        <translation>法语</translation>
    </message>
    <message>
        <source>Spanish</source>
        <translation>西班牙语</translation>
    </message>
    <message>
        <source>Italian</source>
        <translation>意大利语</translation>
    </message>
    <message>
        <source>Portuguese</source>
        <translation>葡萄牙语</translation>
    </message>
    <message>
        <source>Russian</source>
        <translation>俄语</translation>
    </message>
    <message>
        <source>Arabic</source>
        <translation>阿拉伯语</translation>
    </message>
    <message>
        <source>Hindi</source>
        <translation>印地语</translation>
    </message>
    <message>
        <source>Dutch</source>
        <translation>荷兰语</translation>
    </message>
    <message>
        <source>Polish</source>
        <translation>波兰语</translation>
    </message>
    <message>
        <source>Turkish</source>
        <translation>土耳其语</translation>
    </message>
    <message>
        <source>Vietnamese</source>
        <translation>越南语</translation>
    </message>
    <message>
        <source>Thai</source>
        <translation>泰语</translation>
    </message>
    <message>
        <source>Indonesian</source>
        <translation>印尼语</translation>
    </message>
    <message>
        <source>Ukrainian</source>
        <translation>乌克兰语</translation>
    </message>
    <message>
        <source>Swedish</source>
        <translation>瑞典语</translation>
    </message>
    <message>
        <source>Not known</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Many languages</source>
        <translation>多种语言</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>your setting</source>
        <translation>你的设置</translation>
    </message>
    <message>
        <source>the model&apos;s manifest</source>
        <translation>模型清单</translation>
    </message>
    <message>
        <source>Trove&apos;s table of known models</source>
        <translation>Trove 的已知模型表</translation>
    </message>
    <message>
        <source>nothing Trove knows</source>
        <translation>Trove 没有相关信息</translation>
    </message>
    <message>
        <source>{0} (non-commercial use only)</source>
        <translation>{0}（仅限非商业用途）</translation>
    </message>
    <message>
        <source>{0} (built in)</source>
        <translation>{0}（内置）</translation>
    </message>
    <message>
        <source>about {0}</source>
        <translation>约 {0}</translation>
    </message>
    <message>
        <source>Built in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>Needs the local extra</source>
        <translation>需要安装 local 组件</translation>
    </message>
    <message>
        <source>Installed</source>
        <translation>已安装</translation>
    </message>
    <message>
        <source>Damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>Paused, {0} kept</source>
        <translation>已暂停，保留了 {0}</translation>
    </message>
    <message>
        <source>Not downloaded</source>
        <translation>未下载</translation>
    </message>
    <message>
        <source>Its runtime is not installed. Install Trove with the local extra (pip install &apos;trove[local]&apos;) to use it.</source>
        <translation>它的运行环境尚未安装。请安装带 local 组件的 Trove（pip install &apos;trove[local]&apos;）后使用。</translation>
    </message>
    <message>
        <source>This model&apos;s folder is damaged or incomplete. Remove it, then download or import it again.</source>
        <translation>此模型的文件夹已损坏或不完整。请移除它，然后重新下载或导入。</translation>
    </message>
    <message>
        <source>ships with Trove; English</source>
        <translation>随 Trove 提供；英语</translation>
    </message>
    <message>
        <source>small and fast; about 100 languages</source>
        <translation>小巧快速；约 100 种语言</translation>
    </message>
    <message>
        <source>best quality of the list; long inputs (8,192 tokens); about 100 languages</source>
        <translation>列表中质量最好；支持长输入（8,192 个词元）；约 100 种语言</translation>
    </message>
    <message>
        <source>tiny; Chinese first, English too</source>
        <translation>非常小；以中文为主，也支持英语</translation>
    </message>
    <message>
        <source>reranker; about 100 languages</source>
        <translation>重排序模型；约 100 种语言</translation>
    </message>
    <message>
        <source>reranker; about 100 languages; non-commercial use only (CC-BY-NC-4.0)</source>
        <translation>重排序模型；约 100 种语言；仅限非商业用途（CC-BY-NC-4.0）</translation>
    </message>
    <message>
        <source>imported from a folder</source>
        <translation>从文件夹导入</translation>
    </message>
    <message>
        <source>Runs on {0}, measured {1}× as fast as the CPU</source>
        <translation>在 {0} 上运行，实测速度是 CPU 的 {1} 倍</translation>
    </message>
    <message>
        <source>Runs on the CPU (1 thread)</source>
        <translation>在 CPU 上运行（1 个线程）</translation>
    </message>
    <message>
        <source>Runs on the CPU ({0} threads)</source>
        <translation>在 CPU 上运行（{0} 个线程）</translation>
    </message>
    <message>
        <source>{0}; {1} could not run it</source>
        <translation>{0}；{1} 无法运行它</translation>
    </message>
    <message>
        <source>{0}; {1} measured {2}× as fast, so not used</source>
        <translation>{0}；{1} 实测速度为 {2} 倍，故不使用</translation>
    </message>
    <message>
        <source>{0}; {1} is measured when the model is first used</source>
        <translation>{0}；首次使用该模型时会测量 {1} 的速度</translation>
    </message>
    <message>
        <source>Used by {0}</source>
        <translation>使用它的知识库：{0}</translation>
    </message>
</context>
<context>
    <name>ModelsDialog</name>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Models that run on this computer, offline. A knowledge base uses them as its embedding or rerank model (“On this computer” in its settings).</source>
        <translation>在本机离线运行的模型。知识库可将它们用作嵌入模型或重排序模型（在设置中位于“本机”一组）。</translation>
    </message>
    <message>
        <source>Languages:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Cancel download</source>
        <translation>取消下载</translation>
    </message>
    <message>
        <source>Remove…</source>
        <translation>移除…</translation>
    </message>
    <message>
        <source>Import folder…</source>
        <translation>导入文件夹…</translation>
    </message>
    <message>
        <source>Install a model folder copied from another computer (it holds a trove-model.json and the files it names).</source>
        <translation>安装从另一台电脑复制来的模型文件夹（其中有 trove-model.json 及其列出的文件）。</translation>
    </message>
    <message>
        <source>Download mirror</source>
        <translation>下载镜像</translation>
    </message>
    <message>
        <source>For example: https://hf-mirror.com</source>
        <translation>例如：https://hf-mirror.com</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清除</translation>
    </message>
    <message>
        <source>{0} is installed.</source>
        <translation>{0} 已安装。</translation>
    </message>
    <message>
        <source>The download of {0} failed</source>
        <translation>{0} 下载失败</translation>
    </message>
    <message>
        <source>{0} was removed.</source>
        <translation>{0} 已移除。</translation>
    </message>
    <message>
        <source>{0} could not be removed</source>
        <translation>无法移除 {0}</translation>
    </message>
    <message>
        <source>Remove a model</source>
        <translation>移除模型</translation>
    </message>
    <message>
        <source>Remove {0}?

Its files ({1}) are deleted from this computer. It can be downloaded or imported again later.</source>
        <translation>移除 {0}？

它的文件（{1}）将从本机删除。以后可以重新下载或导入。</translation>
    </message>
    <message>
        <source>{0} was imported; it replaces the copy installed before.</source>
        <translation>{0} 已导入，替换了之前安装的副本。</translation>
    </message>
    <message>
        <source>{0} was imported.</source>
        <translation>{0} 已导入。</translation>
    </message>
    <message>
        <source>The folder could not be imported</source>
        <translation>无法导入该文件夹</translation>
    </message>
    <message>
        <source>Choose the folder of a model (it holds trove-model.json)</source>
        <translation>选择模型文件夹（其中有 trove-model.json）</translation>
    </message>
    <message>
        <source>The mirror was not saved</source>
        <translation>镜像未保存</translation>
    </message>
    <message>
        <source>Resume download</source>
        <translation>继续下载</translation>
    </message>
    <message>
        <source>The download goes on</source>
        <translation>下载仍在继续</translation>
    </message>
    <message>
        <source>The status bar shows it; open Models to cancel it.</source>
        <translation>状态栏会显示进度；如需取消，请打开“模型”窗口。</translation>
    </message>
    <message>
        <source>Downloads come from {0}, set by the environment variable {1}; it overrides the setting here while it is set.</source>
        <translation>下载来源：{0}，由环境变量 {1} 指定；设置了该变量时，它优先于这里的设置。</translation>
    </message>
    <message>
        <source>Downloads come from {0}, your setting.</source>
        <translation>下载来源：{0}（你的设置）。</translation>
    </message>
    <message>
        <source>Downloads come from {0}, the default.</source>
        <translation>下载来源：{0}（默认）。</translation>
    </message>
</context>
<context>
    <name>NewBaseDialog</name>
    <message>
        <source>New knowledge base</source>
        <translation>新建知识库</translation>
    </message>
    <message>
        <source>For example: Research papers</source>
        <translation>例如：研究论文</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>这台电脑</translation>
    </message>
    <message>
        <source>PostgreSQL server (shared with a team)</source>
        <translation>PostgreSQL 服务器（与团队共享）</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Where the index lives:</source>
        <translation>索引位置：</translation>
    </message>
    <message>
        <source>Give the knowledge base a name.</source>
        <translation>请为知识库命名。</translation>
    </message>
    <message>
        <source>Connecting to the server at {0} and creating the knowledge base…</source>
        <translation>正在连接服务器 {0} 并创建知识库…</translation>
    </message>
    <message>
        <source>Creating the knowledge base and checking {0}…</source>
        <translation>正在创建知识库并检查 {0}…</translation>
    </message>
    <message>
        <source>Creating the knowledge base…</source>
        <translation>正在创建知识库…</translation>
    </message>
    <message>
        <source>Knowledge base “{0}” created</source>
        <translation>知识库“{0}”已创建</translation>
    </message>
</context>
<context>
    <name>NoteDialog</name>
    <message>
        <source>New note</source>
        <translation>新建笔记</translation>
    </message>
    <message>
        <source>Edit note</source>
        <translation>编辑笔记</translation>
    </message>
    <message>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>Write the note here (Markdown is fine)</source>
        <translation>在这里写笔记（支持 Markdown）</translation>
    </message>
</context>
<context>
    <name>OpenFailedDialog</name>
    <message>
        <source>Could not open {0}</source>
        <translation>无法打开 {0}</translation>
    </message>
    <message>
        <source>No application is set up to open it. It is at {0}</source>
        <translation>没有可打开它的应用程序。它位于 {0}</translation>
    </message>
    <message>
        <source>Could not open</source>
        <translation>无法打开</translation>
    </message>
    <message>
        <source>No application on this computer opened “{0}”. Copy its location, or open its folder and open it from there.</source>
        <translation>这台电脑上没有应用程序能打开“{0}”。可以复制它的位置，或打开所在文件夹后从那里打开。</translation>
    </message>
    <message>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>在文件夹中显示</translation>
    </message>
    <message>
        <source>Copied to the clipboard.</source>
        <translation>已复制到剪贴板。</translation>
    </message>
    <message>
        <source>The folder could not be opened either: {0}</source>
        <translation>文件夹也无法打开：{0}</translation>
    </message>
</context>
<context>
    <name>OriginalOpener</name>
    <message>
        <source>No application could open the original</source>
        <translation>没有应用程序能打开原件</translation>
    </message>
</context>
<context>
    <name>PageRefresh</name>
    <message>
        <source>Refresh now</source>
        <translation>立即刷新</translation>
    </message>
    <message>
        <source>Refresh automatically</source>
        <translation>自动刷新</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>Every hour</source>
        <translation>每小时</translation>
    </message>
    <message>
        <source>Every day</source>
        <translation>每天</translation>
    </message>
    <message>
        <source>Every week</source>
        <translation>每周</translation>
    </message>
</context>
<context>
    <name>PortableFlow</name>
    <message>
        <source>Exporting “{0}”…</source>
        <translation>正在导出“{0}”…</translation>
    </message>
    <message>
        <source>Importing “{0}”…</source>
        <translation>正在导入“{0}”…</translation>
    </message>
    <message>
        <source>No other knowledge base</source>
        <translation>没有其他知识库</translation>
    </message>
    <message>
        <source>Create another knowledge base to copy or move items into.</source>
        <translation>请先创建另一个知识库，再将条目复制或移动过去。</translation>
    </message>
    <message>
        <source>Exported “{0}”</source>
        <translation>已导出“{0}”</translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) saved to {0}</source>
        <translation>
            <numerusform>已将 %n 个文档保存到 {0}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n original file(s) were gone or outside their folder: those documents carry their text and index only.</source>
        <translation>
            <numerusform>有 %n 个原始文件已不存在或位于其文件夹之外：这些文档只带有文本和索引。</numerusform>
        </translation>
    </message>
    <message>
        <source>Imported “{0}”</source>
        <translation>已导入“{0}”</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) with their index and vectors.</source>
        <translation>
            <numerusform>%n 个条目，连同索引和向量。</numerusform>
        </translation>
    </message>
    <message>
        <source>Imported “{0}” without its embedding model</source>
        <translation>已导入“{0}”，但缺少其嵌入模型</translation>
    </message>
    <message>
        <source>Choose a model</source>
        <translation>选择模型</translation>
    </message>
    <message>
        <source>Its model {0} is not set up here, so search uses full text only. Set up the model, or choose another one to compute new vectors.</source>
        <translation>此处未配置其模型 {0}，因此搜索仅使用全文检索。请配置该模型，或选择其他模型重新计算向量。</translation>
    </message>
    <message numerus="yes">
        <source>Moved %n item(s) to “{0}”</source>
        <translation>
            <numerusform>已将 %n 个条目移动到“{0}”</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Copied %n item(s) to “{0}”</source>
        <translation>
            <numerusform>已将 %n 个条目复制到“{0}”</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) are being indexed with its model.</source>
        <translation>
            <numerusform>%n 个文档正在用该知识库的模型建立索引。</numerusform>
        </translation>
    </message>
    <message>
        <source>Their index and vectors came along: nothing is computed again.</source>
        <translation>索引和向量已一并复制，无需重新计算。</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Nothing of it was kept.</source>
        <translation>未保留任何部分。</translation>
    </message>
    <message>
        <source>Export knowledge base</source>
        <translation>导出知识库</translation>
    </message>
    <message>
        <source>Trove knowledge base (*.trovebase)</source>
        <translation>Trove 知识库 (*.trovebase)</translation>
    </message>
    <message>
        <source>Export “{0}” with where its documents came from?</source>
        <translation>导出“{0}”时保留文档的来源吗？</translation>
    </message>
    <message>
        <source>The file keeps, for every file and folder, its path on this computer (such as /home/you/Documents/…), so whoever receives the file can read your folder names. Web addresses and notes are part of the documents and stay. A Trove that imports the file only shows these paths; it never reads them.</source>
        <translation>文件会记下每个文件和文件夹在这台电脑上的路径（例如 /home/you/Documents/…），收到文件的人能看到你的文件夹名称。网址和笔记属于文档本身，会保留。导入该文件的 Trove 只显示这些路径，从不读取它们。</translation>
    </message>
    <message>
        <source>Leave out the paths of files and folders</source>
        <translation>不包含文件和文件夹的路径</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Put the original files of “{0}”&apos;s linked folders in the export?</source>
        <translation>要把“{0}”的链接文件夹中的原始文件一起导出吗？</translation>
    </message>
    <message>
        <source>Its linked folders are indexed where they are: Trove keeps their text and index, not copies of the files. Without the originals, whoever imports the file can search and read the text but cannot open the files themselves; with them, the file grows by the size of those folders.</source>
        <translation>它的链接文件夹是就地索引的：Trove 只保存文本和索引，不保存文件副本。不带原始文件时，导入者可以搜索和阅读文本，但无法打开文件本身；带上原始文件时，导出文件会增大这些文件夹的大小。</translation>
    </message>
    <message>
        <source>Include the originals</source>
        <translation>包含原始文件</translation>
    </message>
    <message>
        <source>Text and index only</source>
        <translation>仅文本和索引</translation>
    </message>
    <message>
        <source>Import knowledge base</source>
        <translation>导入知识库</translation>
    </message>
    <message>
        <source>Move to</source>
        <translation>移动到</translation>
    </message>
    <message>
        <source>Copy to</source>
        <translation>复制到</translation>
    </message>
    <message>
        <source>Knowledge base:</source>
        <translation>知识库：</translation>
    </message>
</context>
<context>
    <name>ProgressTexts</name>
    <message>
        <source>~{0} h {1} min left</source>
        <translation>约剩 {0} 小时 {1} 分钟</translation>
    </message>
    <message>
        <source>~{0} h left</source>
        <translation>约剩 {0} 小时</translation>
    </message>
    <message>
        <source>~{0} min left</source>
        <translation>约剩 {0} 分钟</translation>
    </message>
    <message>
        <source>a few seconds left</source>
        <translation>还剩几秒</translation>
    </message>
    <message>
        <source>~{0} s left</source>
        <translation>约剩 {0} 秒</translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n file(s)</source>
        <translation>
            <numerusform>{0} / %n 个文件</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n page(s)</source>
        <translation>
            <numerusform>{0} / %n 个网页</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{0} of %n document(s)</source>
        <translation>
            <numerusform>{0} / %n 个文档</numerusform>
        </translation>
    </message>
    <message>
        <source>{0} of {1}</source>
        <translation>{0} / {1}</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>Indexing {0}</source>
        <translation>正在索引 {0}</translation>
    </message>
    <message numerus="yes">
        <source>%n document(s) waiting</source>
        <translation>
            <numerusform>%n 个文档等待中</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Preparing %n folder(s) or sitemap(s)</source>
        <translation>
            <numerusform>正在准备 %n 个文件夹或站点地图</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleting %n document(s)</source>
        <translation>
            <numerusform>正在删除 %n 个文档</numerusform>
        </translation>
    </message>
    <message>
        <source>{0}/s</source>
        <translation>{0}/秒</translation>
    </message>
    <message>
        <source>{0} documents/s</source>
        <translation>每秒 {0} 个文档</translation>
    </message>
    <message>
        <source>All bases: {0}</source>
        <translation>全部知识库：{0}</translation>
    </message>
    <message>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Speed: {0}</source>
        <translation>速度：{0}</translation>
    </message>
</context>
<context>
    <name>ProviderForm</name>
    <message>
        <source>The built-in model runs on this computer without a network connection. It needs no settings.</source>
        <translation>内置模型在这台电脑上运行，无需联网，也无需任何设置。</translation>
    </message>
    <message>
        <source>e.g. SiliconFlow</source>
        <translation>例如：硅基流动</translation>
    </message>
    <message>
        <source>Knowledge bases name this provider&apos;s models as ID:MODEL.</source>
        <translation>知识库以“ID:模型”的形式引用此服务商的模型。</translation>
    </message>
    <message>
        <source>Offer this provider&apos;s models to knowledge bases</source>
        <translation>向知识库提供此服务商的模型</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>ID</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>接口地址</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Type a model name</source>
        <translation>输入模型名称</translation>
    </message>
    <message>
        <source>Add model</source>
        <translation>添加模型</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型列表</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Models (checked ones are offered to knowledge bases)</source>
        <translation>模型（勾选的会提供给知识库）</translation>
    </message>
    <message>
        <source>e.g. http://localhost:11434</source>
        <translation>例如：http://localhost:11434</translation>
    </message>
    <message>
        <source>e.g. https://api.jina.ai/v1</source>
        <translation>例如：https://api.jina.ai/v1</translation>
    </message>
    <message>
        <source>e.g. https://api.openai.com/v1</source>
        <translation>例如：https://api.openai.com/v1</translation>
    </message>
    <message>
        <source>Optional; local servers usually need none</source>
        <translation>可选；本地服务通常不需要</translation>
    </message>
    <message>
        <source>e.g. siliconflow</source>
        <translation>例如：siliconflow</translation>
    </message>
    <message>
        <source>No key stored — optional; local servers usually need none</source>
        <translation>未保存密钥——可选；本地服务通常不需要</translation>
    </message>
    <message>
        <source>A key is stored in the system keychain — type to replace it</source>
        <translation>系统钥匙串中已保存密钥——输入新密钥即可替换</translation>
    </message>
    <message>
        <source>Network checks are unavailable</source>
        <translation>无法进行网络检查</translation>
    </message>
    <message>
        <source>The window was started without its asyncio event loop.</source>
        <translation>窗口启动时没有 asyncio 事件循环。</translation>
    </message>
    <message>
        <source>Fetching the model list…</source>
        <translation>正在获取模型列表…</translation>
    </message>
    <message>
        <source>Testing the connection…</source>
        <translation>正在测试连接…</translation>
    </message>
    <message numerus="yes">
        <source>Found %n model(s)</source>
        <translation>
            <numerusform>找到 %n 个模型</numerusform>
        </translation>
    </message>
    <message>
        <source>Check the models knowledge bases may use, then save.</source>
        <translation>勾选知识库可以使用的模型，然后保存。</translation>
    </message>
    <message>
        <source>The provider lists no models</source>
        <translation>此服务商没有列出模型</translation>
    </message>
    <message>
        <source>Type the model names below instead.</source>
        <translation>请在下方手动输入模型名称。</translation>
    </message>
    <message>
        <source>Connection works</source>
        <translation>连接正常</translation>
    </message>
    <message>
        <source>The built-in model works offline ({0} dimensions).</source>
        <translation>内置模型可离线使用（{0} 维）。</translation>
    </message>
    <message>
        <source>{0} answered with the rerank model {1}.</source>
        <translation>{0} 已用重排序模型 {1} 作出回应。</translation>
    </message>
    <message>
        <source>{0} answered: {1} gives {2}-dimensional vectors.</source>
        <translation>{0} 已回应：{1} 生成 {2} 维向量。</translation>
    </message>
    <message>
        <source>Could not fetch the model list</source>
        <translation>无法获取模型列表</translation>
    </message>
    <message>
        <source>The connection test failed</source>
        <translation>连接测试失败</translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https:// and name a host.</source>
        <translation>接口地址必须以 http:// 或 https:// 开头并包含主机名。</translation>
    </message>
    <message>
        <source>Give the provider a name or an ID.</source>
        <translation>请为服务商填写名称或 ID。</translation>
    </message>
    <message>
        <source>The ID cannot contain spaces or &apos;:&apos;.</source>
        <translation>ID 不能包含空格或“:”。</translation>
    </message>
    <message>
        <source>This ID is reserved for the built-in model.</source>
        <translation>此 ID 保留给内置模型。</translation>
    </message>
    <message>
        <source>Another provider already has this ID.</source>
        <translation>已有其他服务商使用此 ID。</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>已保存</translation>
    </message>
</context>
<context>
    <name>ProviderKind</name>
    <message>
        <source>OpenAI-compatible</source>
        <translation>OpenAI 兼容</translation>
    </message>
    <message>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <source>Rerank (/v1/rerank)</source>
        <translation>重排序（/v1/rerank）</translation>
    </message>
    <message>
        <source>Built-in (offline)</source>
        <translation>内置（离线）</translation>
    </message>
</context>
<context>
    <name>ProvidersDialog</name>
    <message>
        <source>Model providers</source>
        <translation>模型服务商</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Remove provider</source>
        <translation>移除服务商</translation>
    </message>
    <message>
        <source>Remove “{0}” and its stored API key? Knowledge bases that use its models cannot embed or rerank until another model is chosen.</source>
        <translation>移除“{0}”及其保存的 API 密钥？使用其模型的知识库在选择其他模型之前将无法嵌入或重排序。</translation>
    </message>
</context>
<context>
    <name>ProvidersModel</name>
    <message>
        <source>{0} (off)</source>
        <translation>{0}（已关闭）</translation>
    </message>
    <message>
        <source>Runs on this computer; nothing to configure.</source>
        <translation>在这台电脑上运行，无需配置。</translation>
    </message>
    <message>
        <source>{0} at {1}</source>
        <translation>{0}，位于 {1}</translation>
    </message>
</context>
<context>
    <name>Questions</name>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Detach</source>
        <translation>断开</translation>
    </message>
</context>
<context>
    <name>RagSettingsForm</name>
    <message>
        <source>Relevance threshold:</source>
        <translation>相关度阈值：</translation>
    </message>
    <message>
        <source>Drop results scoring below</source>
        <translation>丢弃得分低于此值的结果</translation>
    </message>
    <message>
        <source>Applies to reranked relevance scores only; ranking scores are never filtered.</source>
        <translation>只作用于重排序后的相关度分数；排序分数不会被过滤。</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>The overlap must be smaller than the chunk size.</source>
        <translation>重叠大小必须小于分块大小。</translation>
    </message>
    <message>
        <source>Full-text search ranks passages of this many tokens. With an embedding model, passages are also cut into chunks the model reads whole. Changes apply to content added or reindexed after saving.</source>
        <translation>全文检索按这么多词元的段落排序。使用嵌入模型时，段落还会切成模型能完整读取的分块。修改只作用于保存后添加或重新索引的内容。</translation>
    </message>
    <message>
        <source>Recognise text in scanned PDF pages and pictures (OCR)</source>
        <translation>识别扫描 PDF 页面和图片中的文字（OCR）</translation>
    </message>
    <message>
        <source>Chinese</source>
        <translation>中文</translation>
    </message>
    <message>
        <source>English</source>
        <translation>英文</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 词元</translation>
    </message>
    <message>
        <source>How many results a search returns.</source>
        <translation>一次检索返回的结果数量。</translation>
    </message>
    <message>
        <source>Embedding model:</source>
        <translation>嵌入模型：</translation>
    </message>
    <message>
        <source>Languages:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <source>Rerank model:</source>
        <translation>重排序模型：</translation>
    </message>
    <message>
        <source>Document count:</source>
        <translation>文档数量：</translation>
    </message>
    <message>
        <source>Chunk size:</source>
        <translation>分块大小：</translation>
    </message>
    <message>
        <source>Chunk overlap:</source>
        <translation>分块重叠：</translation>
    </message>
    <message>
        <source> pages</source>
        <translation> 页</translation>
    </message>
    <message>
        <source>Most pages of one document whose text is recognised.</source>
        <translation>每个文档最多识别文字的页数。</translation>
    </message>
    <message>
        <source>Recognise:</source>
        <translation>识别语言：</translation>
    </message>
    <message>
        <source>At most:</source>
        <translation>最多：</translation>
    </message>
    <message>
        <source>Pages without a usable text layer and pictures are read by the OCR models installed with Trove, a page at a time, in a background process.</source>
        <translation>没有可用文字层的页面和图片，由随 Trove 安装的 OCR 模型在后台进程中逐页识别。</translation>
    </message>
    <message>
        <source>Text recognition is not installed: scans and pictures cannot be read. Install Trove with its OCR component to turn it on.</source>
        <translation>未安装文字识别：无法读取扫描件和图片。请安装带 OCR 组件的 Trove 后开启。</translation>
    </message>
    <message>
        <source>Download a model</source>
        <translation>下载模型</translation>
    </message>
    <message>
        <source>Download {0}? It is about {1}. It is chosen here once it is installed; you can go on meanwhile.</source>
        <translation>下载 {0}？大小约 {1}。安装完成后会在这里选中它；下载期间你可以继续操作。</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>The download of {0} failed</source>
        <translation>{0} 下载失败</translation>
    </message>
    <message>
        <source>Searches use full-text matching (BM25) only.</source>
        <translation>检索只使用全文匹配（BM25）。</translation>
    </message>
    <message>
        <source>Searches combine full-text matching with this model&apos;s vectors (hybrid).</source>
        <translation>检索结合全文匹配与此模型的向量（混合检索）。</translation>
    </message>
</context>
<context>
    <name>RagSettingsPanel</name>
    <message>
        <source>Revert</source>
        <translation>还原</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Checking the knowledge base…</source>
        <translation>正在检查知识库…</translation>
    </message>
    <message numerus="yes">
        <source>“{0}” has %n item(s) indexed for full-text search only. Compute their vectors with {1}? Searches become hybrid as the items finish.</source>
        <translation>
            <numerusform>“{0}”有 %n 个条目只建立了全文索引。要用 {1} 计算它们的向量吗？条目完成后检索将变为混合检索。</numerusform>
        </translation>
    </message>
    <message>
        <source>Compute vectors</source>
        <translation>计算向量</translation>
    </message>
    <message>
        <source>Add an embedding model</source>
        <translation>添加嵌入模型</translation>
    </message>
    <message>
        <source>{0} and {1} more</source>
        <translation>{0} 等另外 {1} 个</translation>
    </message>
    <message>
        <source>Gone: {0}.</source>
        <translation>已不存在：{0}。</translation>
    </message>
    <message>
        <source>Remove the embedding model</source>
        <translation>移除嵌入模型</translation>
    </message>
    <message numerus="yes">
        <source>Removing {1} rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</source>
        <translation>
            <numerusform>移除 {1} 会重建“{0}”：其中 %n 个条目将根据知识库保存的副本重新索引，仅用于全文检索，向量会被删除。</numerusform>
        </translation>
    </message>
    <message>
        <source>Remove and rebuild</source>
        <translation>移除并重建</translation>
    </message>
    <message>
        <source>Change the embedding model</source>
        <translation>更换嵌入模型</translation>
    </message>
    <message numerus="yes">
        <source>Changing the embedding model from {1} to {2} rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies. Searches miss items until they finish.</source>
        <translation>
            <numerusform>将嵌入模型从 {1} 更换为 {2} 会重建“{0}”：其中 %n 个条目将根据知识库保存的副本重新索引。完成之前，搜索会漏掉这些条目。</numerusform>
        </translation>
    </message>
    <message>
        <source>Change and rebuild</source>
        <translation>更换并重建</translation>
    </message>
    <message>
        <source>Saving…</source>
        <translation>正在保存…</translation>
    </message>
    <message>
        <source>Saving and rebuilding…</source>
        <translation>正在保存并重建…</translation>
    </message>
    <message>
        <source>Rebuilding “{0}”</source>
        <translation>正在重建“{0}”</translation>
    </message>
    <message numerus="yes">
        <source>%n item(s) are being indexed again.</source>
        <translation>
            <numerusform>%n 个条目正在重新索引。</numerusform>
        </translation>
    </message>
    <message>
        <source>Some items of “{0}” could not be rebuilt</source>
        <translation>“{0}”的部分条目无法重建</translation>
    </message>
    <message numerus="yes">
        <source>The original or the base&apos;s own copy of %n item(s) is missing; add them again.</source>
        <translation>
            <numerusform>%n 个条目的原始文件或知识库自己的副本已缺失；请重新添加。</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ResultDelegate</name>
    <message>
        <source>#{0}</source>
        <translation>#{0}</translation>
    </message>
    <message>
        <source>page {0}</source>
        <translation>第 {0} 页</translation>
    </message>
    <message>
        <source>OCR</source>
        <translation>OCR</translation>
    </message>
    <message>
        <source>text recognised from a scan or picture</source>
        <translation>从扫描件或图片中识别的文字</translation>
    </message>
    <message>
        <source>in {0}</source>
        <translation>来自 {0}</translation>
    </message>
</context>
<context>
    <name>SearchResultsModel</name>
    <message>
        <source>relevance</source>
        <translation>相关度</translation>
    </message>
    <message>
        <source>ranking</source>
        <translation>排序</translation>
    </message>
</context>
<context>
    <name>SearchView</name>
    <message>
        <source>Search this knowledge base</source>
        <translation>在此知识库中搜索</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>This base</source>
        <translation>此知识库</translation>
    </message>
    <message>
        <source>All bases</source>
        <translation>全部知识库</translation>
    </message>
    <message>
        <source>Search the selected knowledge base or all of them</source>
        <translation>搜索选中的知识库或全部知识库</translation>
    </message>
    <message>
        <source>Show passage</source>
        <translation>查看段落</translation>
    </message>
    <message>
        <source>Open original</source>
        <translation>打开原件</translation>
    </message>
    <message>
        <source>No knowledge base selected</source>
        <translation>未选择知识库</translation>
    </message>
    <message>
        <source>Choose a knowledge base on the left to search it.</source>
        <translation>在左侧选择一个知识库进行搜索。</translation>
    </message>
    <message numerus="yes">
        <source>%n result(s)</source>
        <translation>
            <numerusform>%n 条结果</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n knowledge base(s) could not be searched</source>
        <translation>
            <numerusform>%n 个知识库无法搜索</numerusform>
        </translation>
    </message>
    <message>
        <source>No results</source>
        <translation>没有结果</translation>
    </message>
    <message>
        <source>Nothing in this knowledge base matches the query. Try other words.</source>
        <translation>此知识库中没有与查询匹配的内容。请换个说法试试。</translation>
    </message>
    <message>
        <source>Nothing in any knowledge base matches the query. Try other words.</source>
        <translation>所有知识库中都没有与查询匹配的内容。请换个说法试试。</translation>
    </message>
    <message>
        <source>No result contains your words; these are only loosely related.</source>
        <translation>没有结果包含你输入的词；以下结果仅略微相关。</translation>
    </message>
    <message>
        <source>No result contains your words; these were found by similar meaning and may not be related.</source>
        <translation>没有结果包含你输入的词；以下结果按语义相近找到，未必相关。</translation>
    </message>
    <message>
        <source>Search all knowledge bases</source>
        <translation>搜索全部知识库</translation>
    </message>
    <message>
        <source>Type a query and press Enter</source>
        <translation>输入查询后按回车</translation>
    </message>
    <message>
        <source>Words or a question; the most relevant passages are listed first.</source>
        <translation>输入关键词或问题；最相关的段落排在最前。</translation>
    </message>
</context>
<context>
    <name>ServerFields</name>
    <message>
        <source>Leave empty if the server needs none</source>
        <translation>服务器不需要密码时留空</translation>
    </message>
    <message>
        <source>The password is kept in the system keychain. Without one, leave it empty and give it in PGPASSWORD or ~/.pgpass.</source>
        <translation>密码保存在系统钥匙串中。没有钥匙串时请留空，改用 PGPASSWORD 或 ~/.pgpass 提供密码。</translation>
    </message>
    <message>
        <source>Server:</source>
        <translation>服务器：</translation>
    </message>
    <message>
        <source>Password:</source>
        <translation>密码：</translation>
    </message>
    <message>
        <source>PostgreSQL support is not installed</source>
        <translation>未安装 PostgreSQL 支持</translation>
    </message>
    <message>
        <source>Install it first: {0}</source>
        <translation>请先安装：{0}</translation>
    </message>
    <message>
        <source>This is not a PostgreSQL server address</source>
        <translation>这不是 PostgreSQL 服务器地址</translation>
    </message>
    <message>
        <source>Write it like {0}.</source>
        <translation>请按 {0} 的格式填写。</translation>
    </message>
    <message>
        <source>The password cannot be kept</source>
        <translation>无法保存密码</translation>
    </message>
    <message>
        <source>No system keychain can keep the server&apos;s password on this computer. Leave the password empty and give it in PGPASSWORD or ~/.pgpass instead.</source>
        <translation>这台电脑上没有可保存服务器密码的系统钥匙串。请将密码留空，改用 PGPASSWORD 或 ~/.pgpass 提供。</translation>
    </message>
</context>
<context>
    <name>StatusDelegate</name>
    <message>
        <source>{0} {1}%</source>
        <translation>{0} {1}%</translation>
    </message>
    <message>
        <source>{0}…</source>
        <translation>{0}…</translation>
    </message>
    <message>
        <source>Searchable · vectors {0}%</source>
        <translation>可检索 · 向量 {0}%</translation>
    </message>
    <message>
        <source>Searchable · vectors…</source>
        <translation>可检索 · 向量计算中…</translation>
    </message>
    <message>
        <source>{0} failed</source>
        <translation>{0} 失败</translation>
    </message>
</context>
<context>
    <name>SyncLogDialog</name>
    <message>
        <source>Sync changes — {0}</source>
        <translation>同步变更 — {0}</translation>
    </message>
    <message>
        <source>No sync has changed anything yet.</source>
        <translation>尚无同步带来任何变更。</translation>
    </message>
    <message>
        <source>  added: {0}</source>
        <translation>  新增：{0}</translation>
    </message>
    <message>
        <source>  changed: {0}</source>
        <translation>  修改：{0}</translation>
    </message>
    <message>
        <source>  removed: {0}</source>
        <translation>  删除：{0}</translation>
    </message>
    <message>
        <source>  renamed: {0} → {1}</source>
        <translation>  重命名：{0} → {1}</translation>
    </message>
    <message>
        <source>  still being written: {0}</source>
        <translation>  仍在写入：{0}</translation>
    </message>
</context>
<context>
    <name>SyncTexts</name>
    <message>
        <source>Linked · syncing {0}/{1}</source>
        <translation>已链接 · 同步中 {0}/{1}</translation>
    </message>
    <message>
        <source>Linked · syncing</source>
        <translation>已链接 · 同步中</translation>
    </message>
    <message>
        <source>Linked · sync problem</source>
        <translation>已链接 · 同步出错</translation>
    </message>
    <message>
        <source>Linked · sync queued</source>
        <translation>已链接 · 等待同步</translation>
    </message>
    <message>
        <source>Linked · watching</source>
        <translation>已链接 · 监视中</translation>
    </message>
    <message>
        <source>Linked folder</source>
        <translation>已链接文件夹</translation>
    </message>
    <message>
        <source>{0} added, {1} changed, {2} removed, {3} renamed</source>
        <translation>新增 {0}，修改 {1}，删除 {2}，重命名 {3}</translation>
    </message>
    <message>
        <source>; {0} still being written</source>
        <translation>；{0} 个仍在写入</translation>
    </message>
    <message>
        <source>Kept in sync with its folder (watched while Trove runs)</source>
        <translation>与其文件夹保持同步（Trove 运行时监视）</translation>
    </message>
    <message>
        <source>Kept in sync with its folder</source>
        <translation>与其文件夹保持同步</translation>
    </message>
    <message>
        <source>Last synced: {0}</source>
        <translation>上次同步：{0}</translation>
    </message>
    <message>
        <source>Not synced yet</source>
        <translation>尚未同步</translation>
    </message>
    <message>
        <source>Last changes: {0}</source>
        <translation>最近变更：{0}</translation>
    </message>
    <message>
        <source>Sync problem: {0}</source>
        <translation>同步问题：{0}</translation>
    </message>
</context>
<context>
    <name>Toast</name>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ToastArea</name>
    <message>
        <source>Dismiss these notifications to see the next ones</source>
        <translation>关闭这些通知以查看后面的通知</translation>
    </message>
    <message numerus="yes">
        <source>+%n more</source>
        <translation>
            <numerusform>还有 %n 条</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>UrlDialog</name>
    <message>
        <source>Add sitemap</source>
        <translation>添加站点地图</translation>
    </message>
    <message>
        <source>Sitemap address (every page it lists is added and kept together):</source>
        <translation>站点地图地址（其中列出的所有页面都会被添加并归在一起）：</translation>
    </message>
    <message>
        <source>Add web pages</source>
        <translation>添加网页</translation>
    </message>
    <message>
        <source>Page addresses, one per line:</source>
        <translation>网页地址，每行一个：</translation>
    </message>
    <message>
        <source>Not a web address: {0}</source>
        <translation>不是网址：{0}</translation>
    </message>
    <message>
        <source>Enter an address that starts with http:// or https://</source>
        <translation>请输入以 http:// 或 https:// 开头的地址</translation>
    </message>
    <message>
        <source>Enter one sitemap address</source>
        <translation>请输入一个站点地图地址</translation>
    </message>
</context>
<context>
    <name>_Run</name>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>errors</name>
    <message>
        <source>The file has no text that can be indexed</source>
        <translation>文件中没有可索引的文本</translation>
    </message>
    <message>
        <source>Indexing was interrupted</source>
        <translation>索引被中断</translation>
    </message>
    <message>
        <source>The original is missing</source>
        <translation>原件已丢失</translation>
    </message>
    <message>
        <source>This file type is not supported</source>
        <translation>不支持此文件类型</translation>
    </message>
    <message>
        <source>The file is too large</source>
        <translation>文件过大</translation>
    </message>
    <message>
        <source>Text recognition (OCR) is not installed</source>
        <translation>未安装文字识别（OCR）</translation>
    </message>
    <message>
        <source>The picture is too large</source>
        <translation>图片过大</translation>
    </message>
    <message>
        <source>Text recognition failed</source>
        <translation>文字识别失败</translation>
    </message>
    <message>
        <source>The file could not be read</source>
        <translation>无法读取文件</translation>
    </message>
    <message>
        <source>The embedding model failed</source>
        <translation>嵌入模型出错</translation>
    </message>
    <message>
        <source>The rerank model failed</source>
        <translation>重排序模型出错</translation>
    </message>
    <message>
        <source>The index is damaged — run restore</source>
        <translation>索引已损坏 — 请运行恢复</translation>
    </message>
    <message>
        <source>The catalog is damaged</source>
        <translation>目录已损坏</translation>
    </message>
    <message>
        <source>The PostgreSQL server cannot be used</source>
        <translation>无法使用 PostgreSQL 服务器</translation>
    </message>
    <message>
        <source>The system keychain is not available</source>
        <translation>系统钥匙串不可用</translation>
    </message>
    <message>
        <source>The provider refused the API key</source>
        <translation>服务商拒绝了 API 密钥</translation>
    </message>
    <message>
        <source>The page could not be fetched</source>
        <translation>无法获取网页</translation>
    </message>
    <message>
        <source>Every item inside failed</source>
        <translation>其中的所有条目都失败了</translation>
    </message>
    <message>
        <source>The knowledge base needs to be restored</source>
        <translation>知识库需要恢复</translation>
    </message>
    <message>
        <source>The knowledge base no longer exists</source>
        <translation>知识库已不存在</translation>
    </message>
    <message>
        <source>Several knowledge bases have this name</source>
        <translation>有多个知识库使用此名称</translation>
    </message>
    <message>
        <source>The item no longer exists</source>
        <translation>条目已不存在</translation>
    </message>
    <message>
        <source>The query has no searchable words</source>
        <translation>查询中没有可检索的词</translation>
    </message>
    <message>
        <source>The item is busy</source>
        <translation>条目正忙</translation>
    </message>
    <message>
        <source>Invalid value</source>
        <translation>无效的值</translation>
    </message>
    <message>
        <source>The model is not available</source>
        <translation>模型不可用</translation>
    </message>
    <message>
        <source>Unsafe path</source>
        <translation>不安全的路径</translation>
    </message>
    <message>
        <source>The disk is full</source>
        <translation>磁盘已满</translation>
    </message>
    <message>
        <source>The data folder is read-only</source>
        <translation>数据文件夹是只读的</translation>
    </message>
    <message>
        <source>Already in this knowledge base</source>
        <translation>已在此知识库中</translation>
    </message>
    <message>
        <source>The export file is damaged</source>
        <translation>导出文件已损坏</translation>
    </message>
    <message>
        <source>The export file needs a newer Trove</source>
        <translation>此导出文件需要更新版本的 Trove</translation>
    </message>
    <message>
        <source>The export file was not made by Trove</source>
        <translation>导出文件并非由 Trove 生成</translation>
    </message>
    <message>
        <source>This came with an imported knowledge base</source>
        <translation>这来自导入的知识库</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>The chat model failed</source>
        <translation>对话模型出错</translation>
    </message>
    <message>
        <source>The chat model is busy</source>
        <translation>对话模型繁忙</translation>
    </message>
    <message>
        <source>The passages do not fit the chat model</source>
        <translation>段落超出对话模型的上下文</translation>
    </message>
    <message>
        <source>The answer broke off</source>
        <translation>回答中断了</translation>
    </message>
    <message>
        <source>Something went wrong</source>
        <translation>出现问题</translation>
    </message>
    <message>
        <source>“{0}” is used by these knowledge bases: {1}. Give them another model (or delete them) first.</source>
        <translation>知识库 {1} 正在使用“{0}”。请先为它们换用其他模型（或删除它们）。</translation>
    </message>
    <message>
        <source>The downloaded file {0} does not match the checksum the model hub publishes, so it was deleted. Download again, or use another mirror.</source>
        <translation>下载的文件 {0} 与模型仓库公布的校验和不符，已被删除。请重新下载，或换用其他镜像。</translation>
    </message>
    <message>
        <source>{0} does not match the checksum its trove-model.json records: the copy is damaged or incomplete. Copy the folder again.</source>
        <translation>{0} 与 trove-model.json 记录的校验和不符：副本已损坏或不完整。请重新复制该文件夹。</translation>
    </message>
    <message>
        <source>The server sent {0} with another size than the model hub announced, so it was deleted. Download again, or use another mirror.</source>
        <translation>服务器发送的 {0} 大小与模型仓库公布的不同，已被删除。请重新下载，或换用其他镜像。</translation>
    </message>
    <message>
        <source>The server sent something other than the model file {0} (an error page?), so it was deleted. Use another mirror.</source>
        <translation>服务器发送的不是模型文件 {0}（可能是错误页面），已被删除。请换用其他镜像。</translation>
    </message>
    <message>
        <source>{0} is not a usable model file: it is empty, or of another kind.</source>
        <translation>{0} 不是可用的模型文件：它是空的，或是其他类型的文件。</translation>
    </message>
    <message>
        <source>Another download, import or removal of “{0}” is running (in this or another Trove window or command). Wait for it to finish, then try again.</source>
        <translation>“{0}”正在被下载、导入或移除（在此窗口、另一个 Trove 窗口或命令中）。请等它完成后再试。</translation>
    </message>
    <message>
        <source>A file of “{0}” is in use. Stop the searches and indexing that use it (or close Trove), then try again.</source>
        <translation>“{0}”的某个文件正在使用中。请停止使用它的搜索和索引（或关闭 Trove），然后再试。</translation>
    </message>
    <message>
        <source>There is not enough free disk space: the model needs about {0} and {1} is free. Free some space, then try again (a download resumes where it stopped).</source>
        <translation>磁盘空间不足：模型需要约 {0}，可用空间为 {1}。请释放一些空间后再试（下载会从中断处继续）。</translation>
    </message>
    <message>
        <source>The disk filled up while the model was being written. Free some space, then try again (a download resumes where it stopped).</source>
        <translation>写入模型时磁盘已满。请释放一些空间后再试（下载会从中断处继续）。</translation>
    </message>
    <message>
        <source>Cannot reach {0}. Check the internet connection; or set a mirror of the model hub in the Models window (for example https://hf-mirror.com); or download the model on a connected computer, copy its folder here and import it.</source>
        <translation>无法连接 {0}。请检查网络连接；或在“模型”窗口中设置模型仓库的镜像（例如 https://hf-mirror.com）；或在能联网的电脑上下载模型，把它的文件夹复制到这里再导入。</translation>
    </message>
    <message>
        <source>{0} is not a folder.</source>
        <translation>{0} 不是文件夹。</translation>
    </message>
    <message>
        <source>{0} has no trove-model.json. Choose the whole folder of an installed model (the folder Trove made for it in its data folder on another computer).</source>
        <translation>{0} 中没有 trove-model.json。请选择已安装模型的整个文件夹（即另一台电脑上 Trove 在其数据文件夹中为该模型建立的文件夹）。</translation>
    </message>
    <message>
        <source>{0} lacks files its trove-model.json names: {1}.</source>
        <translation>{0} 缺少 trove-model.json 中列出的文件：{1}。</translation>
    </message>
    <message>
        <source>The folder&apos;s trove-model.json cannot be used: it is damaged, incomplete or of a newer Trove.</source>
        <translation>该文件夹的 trove-model.json 无法使用：它已损坏、不完整，或来自更新版本的 Trove。</translation>
    </message>
    <message>
        <source>{0} does not have the file {1} of this model (HTTP 404): the mirror may not carry it. Try another mirror, or import the model.</source>
        <translation>{0} 上没有此模型的文件 {1}（HTTP 404）：该镜像可能未收录它。请换用其他镜像，或导入该模型。</translation>
    </message>
    <message>
        <source>The download from {0} stopped after several attempts. What was downloaded is kept: download again to resume it.</source>
        <translation>从 {0} 下载多次尝试后仍中断。已下载的部分已保留：重新下载即可继续。</translation>
    </message>
    <message>
        <source>{0} MB</source>
        <translation>{0} MB</translation>
    </message>
    <message>
        <source>The model “{0}” is not available. Choose another one in the settings.</source>
        <translation>模型“{0}”不可用。请在设置中另选一个。</translation>
    </message>
    <message>
        <source>Trove could not connect to the PostgreSQL server at {0}, or it refused the login. Check the address, the password and that the server is running.</source>
        <translation>Trove 无法连接位于 {0} 的数据库服务器，或服务器拒绝了登录。请检查地址、密码以及服务器是否在运行。</translation>
    </message>
    <message>
        <source>No text could be extracted from this source. Is it empty, or only images?</source>
        <translation>未能从此来源提取到文字。它是否为空，或只包含图片？</translation>
    </message>
    <message>
        <source>Trove was closed, or the time limit ran out, while this item was being processed. Reindex it to finish.</source>
        <translation>处理此条目时 Trove 被关闭或超出了时间限制。重新索引即可完成。</translation>
    </message>
    <message>
        <source>The original file, folder or page is gone. Delete the item and add it again.</source>
        <translation>原始文件、文件夹或网页已不存在。请删除此条目后重新添加。</translation>
    </message>
    <message>
        <source>Trove cannot read text from this kind of source.</source>
        <translation>Trove 无法从这类来源读取文字。</translation>
    </message>
    <message>
        <source>The source is larger than Trove indexes.</source>
        <translation>此来源超出了 Trove 可索引的大小。</translation>
    </message>
    <message>
        <source>Reading text from scans and pictures needs Trove&apos;s OCR component. Install Trove with it (the “ocr” extra), then reindex.</source>
        <translation>读取扫描件和图片中的文字需要 Trove 的 OCR 组件。请安装它（“ocr”扩展）后重新索引。</translation>
    </message>
    <message>
        <source>The picture has more pixels than Trove reads (it may be an image bomb). Scale it down, then add it again.</source>
        <translation>图片的像素超过 Trove 可读取的上限（可能是图片炸弹）。请缩小后重新添加。</translation>
    </message>
    <message>
        <source>Text could not be recognised on this document&apos;s pages (the recognition process stopped or ran out of memory). Reindex to try again.</source>
        <translation>无法识别此文档页面上的文字（识别进程中止或内存不足）。请重新索引以重试。</translation>
    </message>
    <message>
        <source>The file may be damaged, encrypted or not a text document. Check it, then reindex.</source>
        <translation>文件可能已损坏、已加密或不是文本文档。请检查后重新索引。</translation>
    </message>
    <message>
        <source>The embedding model could not compute vectors. Check the provider, then reindex.</source>
        <translation>嵌入模型未能计算向量。请检查服务商后重新索引。</translation>
    </message>
    <message>
        <source>The rerank model could not order the results.</source>
        <translation>重排序模型未能对结果排序。</translation>
    </message>
    <message>
        <source>The provider refused the API key. Check the key in the provider settings.</source>
        <translation>服务商拒绝了 API 密钥。请在服务商设置中检查密钥。</translation>
    </message>
    <message>
        <source>The system keychain could not store or read the API key.</source>
        <translation>系统钥匙串无法保存或读取 API 密钥。</translation>
    </message>
    <message>
        <source>The server could not be reached or answered with an error. Try again later.</source>
        <translation>无法连接服务器，或服务器返回了错误。请稍后重试。</translation>
    </message>
    <message>
        <source>None of the items inside could be indexed. Point at one to see why.</source>
        <translation>其中的条目均未能索引。将鼠标指向某个条目可查看原因。</translation>
    </message>
    <message>
        <source>The disk that holds Trove&apos;s data is full. Free some space, then try again.</source>
        <translation>存放 Trove 数据的磁盘已满。请释放一些空间后重试。</translation>
    </message>
    <message>
        <source>Trove&apos;s data folder cannot be written. Make it writable, then try again.</source>
        <translation>Trove 的数据文件夹无法写入。请使其可写后重试。</translation>
    </message>
    <message>
        <source>This knowledge base has failed. Restore it from the settings panel.</source>
        <translation>此知识库已失效。请在设置面板中恢复它。</translation>
    </message>
    <message>
        <source>It may have been deleted meanwhile.</source>
        <translation>它可能已在此期间被删除。</translation>
    </message>
    <message>
        <source>Choose the knowledge base by its ID instead.</source>
        <translation>请改用 ID 指定知识库。</translation>
    </message>
    <message>
        <source>Type at least one word or number; punctuation and spaces alone cannot be searched.</source>
        <translation>请至少输入一个词或数字；仅有标点和空格无法搜索。</translation>
    </message>
    <message>
        <source>The item is being changed by another action. Try again in a moment.</source>
        <translation>此条目正被另一项操作修改。请稍后重试。</translation>
    </message>
    <message>
        <source>A value was not accepted.</source>
        <translation>有一个值未被接受。</translation>
    </message>
    <message>
        <source>No configured provider offers this model. Check the model providers.</source>
        <translation>已配置的服务商均未提供此模型。请检查模型服务商。</translation>
    </message>
    <message>
        <source>The path leads outside the knowledge base&apos;s folder.</source>
        <translation>该路径指向知识库文件夹之外。</translation>
    </message>
    <message>
        <source>The index of this knowledge base is damaged. Restore rebuilds it from the base&apos;s own copies.</source>
        <translation>此知识库的索引已损坏。恢复操作会根据知识库保存的副本重建索引。</translation>
    </message>
    <message>
        <source>Trove&apos;s catalog file cannot be read.</source>
        <translation>无法读取 Trove 的目录文件。</translation>
    </message>
    <message>
        <source>The PostgreSQL server of this knowledge base cannot be reached, or it refused the login. Check that the server is running and this computer may connect.</source>
        <translation>无法连接此知识库所在的数据库服务器，或服务器拒绝了登录。请检查服务器是否在运行，以及这台电脑是否允许连接。</translation>
    </message>
    <message>
        <source>This source is already in the knowledge base.</source>
        <translation>此来源已在知识库中。</translation>
    </message>
    <message>
        <source>The file is cut short, changed since it was exported, or not a Trove export. Nothing was imported; export the knowledge base again.</source>
        <translation>文件不完整、导出后被修改过，或不是 Trove 导出文件。未导入任何内容；请重新导出该知识库。</translation>
    </message>
    <message>
        <source>It was exported by a newer version of Trove. Nothing was imported; update Trove, then import it again.</source>
        <translation>它由更新版本的 Trove 导出。未导入任何内容；请更新 Trove 后再导入。</translation>
    </message>
    <message>
        <source>It holds things no Trove export holds, such as commands that would run inside its index. It may have been made to attack; nothing was imported.</source>
        <translation>文件中含有 Trove 导出文件不会有的内容，例如会在其索引中运行的命令。它可能是为攻击而制作的；没有导入任何内容。</translation>
    </message>
    <message>
        <source>Its source names a file, folder or page of the computer the knowledge base came from, so Trove does not read it. Add it again from this computer to keep it in sync or refresh it; reindexing uses the knowledge base&apos;s own copy.</source>
        <translation>它的来源指向知识库原来那台电脑上的文件、文件夹或网页，因此 Trove 不会读取它。要保持同步或刷新，请从这台电脑重新添加；重新索引会使用知识库自己的副本。</translation>
    </message>
    <message>
        <source>Nothing of it was kept.</source>
        <translation>未保留任何部分。</translation>
    </message>
    <message>
        <source>The chat model could not answer. Check the provider, then ask again.</source>
        <translation>对话模型无法回答。请检查服务商后重新提问。</translation>
    </message>
    <message>
        <source>The question and the passages found are longer than the chat model can read, even with fewer passages. Ask a shorter question or choose a larger model.</source>
        <translation>问题和检索到的段落超出了对话模型能读取的长度，减少段落后仍然超出。请缩短问题或选择上下文更大的模型。</translation>
    </message>
    <message>
        <source>The connection to the chat model broke while it was answering. The part that arrived is kept; ask again for the rest.</source>
        <translation>对话模型回答时连接中断。已收到的部分已保留；可重新提问获取其余内容。</translation>
    </message>
    <message>
        <source>The chat model&apos;s provider asks to wait %n second(s) before the next question.</source>
        <translation>对话模型的服务商要求等待 %n 秒后再提问。</translation>
    </message>
    <message>
        <source>The chat model&apos;s provider gets too many requests. Wait a moment, then ask again.</source>
        <translation>对话模型的服务商请求过多。请稍候再提问。</translation>
    </message>
    <message>
        <source>An unexpected error occurred.</source>
        <translation>发生了意外错误。</translation>
    </message>
    <message>
        <source>The provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Nothing answered at {0}. Is the server running, and is the address right?</source>
        <translation>{0} 没有响应。服务是否已启动？地址是否正确？</translation>
    </message>
    <message>
        <source>The host of {0} could not be found. Check the address and the network.</source>
        <translation>找不到 {0} 的主机。请检查地址和网络。</translation>
    </message>
    <message>
        <source>Could not connect to {0}. Check the address and the network.</source>
        <translation>无法连接到 {0}。请检查地址和网络。</translation>
    </message>
    <message>
        <source>{0} did not answer in time. Try again later.</source>
        <translation>{0} 未能及时响应。请稍后重试。</translation>
    </message>
    <message>
        <source>{0} rejected the API key (HTTP {1}). Check the key.</source>
        <translation>{0} 拒绝了 API 密钥（HTTP {1}）。请检查密钥。</translation>
    </message>
    <message>
        <source>{0} needs an API key (HTTP {1}), and none is set.</source>
        <translation>{0} 需要 API 密钥（HTTP {1}），但尚未设置。</translation>
    </message>
    <message>
        <source>{0} answered HTTP 404: the model name is unknown or the base URL is wrong.</source>
        <translation>{0} 返回 HTTP 404：模型名称不存在，或接口地址有误。</translation>
    </message>
    <message>
        <source>{0} has no model “{1}”.</source>
        <translation>{0} 没有模型“{1}”。</translation>
    </message>
    <message>
        <source>{0} lists no models. Type a model name first.</source>
        <translation>{0} 未列出任何模型。请先输入模型名称。</translation>
    </message>
    <message>
        <source>{0} answered with an error (HTTP {1}).</source>
        <translation>{0} 返回了错误（HTTP {1}）。</translation>
    </message>
    <message>
        <source>{0} gave an answer Trove cannot read. Is the base URL right?</source>
        <translation>{0} 的回复 Trove 无法识别。接口地址是否正确？</translation>
    </message>
    <message>
        <source>{0} answered in an unexpected format.</source>
        <translation>{0} 的回复格式不符合预期。</translation>
    </message>
    <message>
        <source>The model “{0}” returned vectors of {1} dimensions instead of {2}. Restore the knowledge base to switch models.</source>
        <translation>模型“{0}”返回了 {1} 维向量，而不是 {2} 维。请恢复知识库以更换模型。</translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https:// and name a host.</source>
        <translation>接口地址必须以 http:// 或 https:// 开头并包含主机名。</translation>
    </message>
    <message>
        <source>No system keychain is available to store the API key. Set the environment variable {0} to the key instead.</source>
        <translation>没有可用的系统钥匙串来保存 API 密钥。请改为将环境变量 {0} 设为该密钥。</translation>
    </message>
    <message>
        <source>The answer took longer than {0} seconds and was cut off there. The part that arrived is kept.</source>
        <translation>回答超过了 {0} 秒，已在此处截断。已收到的部分已保留。</translation>
    </message>
    <message>
        <source>The answer grew longer than {0} characters and was cut off there. The part that arrived is kept.</source>
        <translation>回答超过了 {0} 个字符，已在此处截断。已收到的部分已保留。</translation>
    </message>
    <message>
        <source>Details: {0}</source>
        <translation>详细信息：{0}</translation>
    </message>
    <message>
        <source>A file operation failed</source>
        <translation>文件操作失败</translation>
    </message>
    <message>
        <source>The same content is already in this knowledge base as {0}.</source>
        <translation>相同内容已作为 {0} 存在于此知识库中。</translation>
    </message>
    <message>
        <source>The embedding model failed, so only full-text matching was used.</source>
        <translation>嵌入模型出错，因此只使用了全文匹配。</translation>
    </message>
    <message>
        <source>The rerank model was not asked, since the embedding model failed.</source>
        <translation>由于嵌入模型出错，未调用重排序模型。</translation>
    </message>
    <message>
        <source>The rerank model failed, so the results keep their first order.</source>
        <translation>重排序模型出错，结果保持原有顺序。</translation>
    </message>
</context>
</TS>
