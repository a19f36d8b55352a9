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
        <source>Delete the knowledge base “{0}” with everything indexed in it? The original files are not touched.</source>
        <translation>删除知识库“{0}”及其中已索引的全部内容？原始文件不会被改动。</translation>
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
        <source>{0}, page {1}</source>
        <translation>{0}，第 {1} 页</translation>
    </message>
    <message>
        <source>Loading the document…</source>
        <translation>正在加载文档…</translation>
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
        <source>Filter by name</source>
        <translation>按名称筛选</translation>
    </message>
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
    <message numerus="yes">
        <source>Delete %n item(s) and their indexed content?</source>
        <translation>
            <numerusform>删除 %n 个条目及其已索引的内容？</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete items</source>
        <translation>删除条目</translation>
    </message>
    <message>
        <source>This knowledge base needs to be restored: {0}</source>
        <translation>此知识库需要恢复：{0}</translation>
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
        <source>Connect AI agents…</source>
        <translation>连接 AI 智能体…</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
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
        <source>%n item(s) are being indexed right now. Quit anyway? They are marked interrupted and can be reindexed; items still waiting are indexed next time.</source>
        <translation>
            <numerusform>有 %n 个条目正在建立索引。仍要退出吗？它们会被标记为已中断，之后可以重新索引；仍在等待的条目会在下次启动时继续索引。</numerusform>
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
        <source>Not configured</source>
        <translation>未配置</translation>
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
        <source>{0} — {1}</source>
        <translation>{0} — {1}</translation>
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
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Give the knowledge base a name.</source>
        <translation>请为知识库命名。</translation>
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
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <source>Write the note here (Markdown is fine)</source>
        <translation>在这里写笔记（支持 Markdown）</translation>
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
        <source>Kept in the system keychain — type to replace</source>
        <translation>已保存在系统钥匙串中——输入新值即可替换</translation>
    </message>
    <message>
        <source>e.g. siliconflow</source>
        <translation>例如：siliconflow</translation>
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
    <message>
        <source>Add vectors</source>
        <translation>添加向量</translation>
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
    <message numerus="yes">
        <source>Removing the embedding model rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies for full-text search only, and the vectors are deleted.</source>
        <translation>
            <numerusform>移除嵌入模型会重建“{0}”：其 %n 个条目将根据知识库自身的副本重新建立仅全文索引，向量将被删除。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Changing the embedding model rebuilds “{0}”: its %n item(s) are indexed again from the base&apos;s own copies with {1}. Searches miss items until they finish.</source>
        <translation>
            <numerusform>更换嵌入模型会重建“{0}”：其 %n 个条目将用 {1} 根据知识库自身的副本重新索引。完成之前检索会漏掉这些条目。</numerusform>
        </translation>
    </message>
    <message>
        <source>Restore the knowledge base</source>
        <translation>恢复知识库</translation>
    </message>
    <message>
        <source>Restore</source>
        <translation>恢复</translation>
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
        <source>The base&apos;s own copy of %n item(s) is missing; add them again.</source>
        <translation>
            <numerusform>知识库中 %n 个条目的副本已丢失，请重新添加。</numerusform>
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
    <message>
        <source>No results</source>
        <translation>没有结果</translation>
    </message>
    <message>
        <source>Nothing in this knowledge base matches the query. Try other words.</source>
        <translation>此知识库中没有与查询匹配的内容。请换个说法试试。</translation>
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
        <source>{0} failed</source>
        <translation>{0} 失败</translation>
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
        <source>Something went wrong</source>
        <translation>出现问题</translation>
    </message>
    <message>
        <source>A file operation failed</source>
        <translation>文件操作失败</translation>
    </message>
</context>
</TS>
