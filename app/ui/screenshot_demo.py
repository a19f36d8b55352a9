"""A demo knowledge base for screenshots and the window's self-test: real documents indexed
by the real pipeline, plus items caught in each state an indexing run passes through.

Qt-free: it only drives KnowledgeService, so it can stage a data folder without a window."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from app.knowledge.service import KnowledgeService
from app.knowledge.types import (
    AnswerState,
    AskSource,
    AskTurn,
    Base,
    ItemPhase,
    ItemStatus,
    ItemType,
    SearchResult,
)

# (English file name, Chinese file name, English text, Chinese text)
DOCUMENTS: list[tuple[str, str, str, str]] = [
    (
        "hybrid-search.md",
        "混合检索.md",
        "# Hybrid search\n\nHybrid search runs a BM25 full-text query and a vector query side "
        "by side and fuses the two ranked lists. Exact terms such as product codes come from "
        "BM25; paraphrases and synonyms come from the embedding model.",
        "# 混合检索\n\n混合检索同时执行 BM25 全文检索和向量检索，并融合两个排序列表。"
        "产品编号等精确词由 BM25 找到，同义改写由嵌入模型找到。",
    ),
    (
        "chunking.md",
        "分块.md",
        "# Chunking\n\nDocuments are split into overlapping chunks of about 512 characters. "
        "Each chunk keeps its offsets in the original text, so a search result opens at the "
        "exact place it came from.",
        "# 分块\n\n文档被切分为约 512 个字符、相互重叠的分块。每个分块都保留它在原文中的位置，"
        "因此搜索结果能准确打开到出处。",
    ),
    (
        "reranking.md",
        "重排序.md",
        "# Reranking\n\nA rerank model reads the query together with each candidate chunk and "
        "scores their relevance. Only reranked scores are comparable, so the similarity "
        "threshold applies only when a rerank model is chosen.",
        "# 重排序\n\n重排序模型把查询和每个候选分块放在一起阅读并给出相关度分数。"
        "只有重排序分数可以相互比较，因此只有选择了重排序模型时才使用相似度阈值。",
    ),
    (
        "backups.txt",
        "备份.txt",
        "Backups: every knowledge base keeps its own copies of the documents it indexed, so "
        "it can be rebuilt with another embedding model without the original files.",
        "备份：每个知识库都保存其索引文档的副本，因此无需原始文件即可用另一个嵌入模型重建。",
    ),
]


@dataclass(frozen=True, slots=True)
class Demo:
    base: Base
    query: str


def create_demo(
    service: KnowledgeService,
    folder: Path,
    *,
    language: str = "en",
    embedding_model: str | None = None,
) -> Demo:
    """Create and index the demo base; leave some items waiting, one embedding, one deleting
    and one failed, so every badge shows. `folder` receives the demo's source files."""
    chinese = language.startswith("zh")
    handbook = folder / ("手册" if chinese else "handbook")
    handbook.mkdir(parents=True, exist_ok=True)
    name = "产品文档" if chinese else "Product handbook"
    base = service.create_base(name, embedding_model=embedding_model)
    files = []
    for en_name, zh_name, english, zh in DOCUMENTS:
        file_name = zh_name if chinese else en_name
        path = (handbook if file_name.endswith(".md") else folder) / file_name
        path.write_text(zh if chinese else english, encoding="utf-8")
        files.append(path)
    empty = handbook / ("空白.txt" if chinese else "blank.txt")
    empty.write_text("   \n", encoding="utf-8")  # fails: no indexable text
    service.add(base.id, [handbook, files[-1]])
    service.add_note(
        base.id,
        "会议记录" if chinese else "Meeting notes",
        "决定：默认启用混合检索。" if chinese else "Decision: hybrid search is the default.",
    )
    service.run_pending_jobs(base.id)
    later = _write_later_files(folder, chinese)
    waiting = service.add(base.id, later).added
    _show_running(service, waiting[0].id)
    doomed = next(i for i in service.list_items(base.id) if i.source == str(files[-1]))
    service.delete_items(base.id, [doomed.id])
    if embedding_model is not None:
        _show_vectors_pending(service, base.id)
    query = "混合检索 分块" if chinese else "hybrid search chunks"
    return Demo(base=service.get_base(base.id), query=query)


def _write_later_files(folder: Path, chinese: bool) -> list[Path]:
    texts = {
        ("发布说明.md" if chinese else "release-notes.md"): (
            "# 发布说明\n\n新增站点地图导入。" if chinese else "# Release notes\n\nSitemap import."
        ),
        ("路线图.md" if chinese else "roadmap.md"): (
            "# 路线图\n\n更多文件格式。" if chinese else "# Roadmap\n\nMore file formats."
        ),
    }
    paths = []
    for file_name, text in texts.items():
        path = folder / file_name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _show_running(service: KnowledgeService, item_id: str) -> None:
    """Put one waiting item where a running job would be: processing, reading. A file just
    added is already processing (nothing runs its job here), so only the phase is
    written, the way the executor persists a running job's progress."""
    service.jobs.set_item_phase(item_id, ItemPhase.READING, None)


def _show_vectors_pending(service: KnowledgeService, base_id: str) -> None:
    """One completed document still waiting for 55% of its vectors: searchable by its
    words, "Searchable · vectors 45%" (the vector stage's own progress)."""
    done = [
        i
        for i in service.list_items(base_id)
        if i.status is ItemStatus.COMPLETED and i.type is ItemType.FILE
    ]
    if done:
        service.jobs.set_item_phase(done[0].id, ItemPhase.EMBEDDING, 45.0)


# (question, what was searched, answer, the documents [1], [2] ... it cites) per language:
# a first question, then a follow-up the chat model rewrote.
DemoTurn = tuple[str, str, str, tuple[str, ...]]
CONVERSATION: dict[str, list[DemoTurn]] = {
    "en": [
        (
            "How does hybrid search work?",
            "How does hybrid search work?",
            "It runs a BM25 full-text query and a vector query side by side and fuses the two "
            "ranked lists [1]. Exact terms such as product codes come from BM25; paraphrases "
            "come from the embedding model [1]. Each result opens at the exact place it came "
            "from, since chunks keep their offsets [2].",
            ("hybrid-search.md", "chunking.md"),
        ),
        (
            "And when does the threshold apply?",
            "when does the similarity threshold apply in search",
            "Only when a rerank model is chosen: only reranked scores are comparable [1].",
            ("reranking.md",),
        ),
    ],
    "zh": [
        (
            "混合检索是怎么工作的？",
            "混合检索是怎么工作的？",
            "它同时执行 BM25 全文检索和向量检索，并融合两个排序列表 [1]。产品编号等精确词由 "
            "BM25 找到，同义改写由嵌入模型找到 [1]。分块保留了在原文中的位置，所以结果能准确"
            "打开到出处 [2]。",
            ("混合检索.md", "分块.md"),
        ),
        (
            "那阈值什么时候生效？",
            "相似度 阈值 重排序",
            "只有选择了重排序模型时才使用阈值：只有重排序分数可以相互比较 [1]。",
            ("重排序.md",),
        ),
    ],
}
DEMO_CHAT_PROVIDER = ("ollama", "http://127.0.0.1:11434", "qwen2.5:7b")


def _cited_order(result: SearchResult, cited: tuple[str, ...]) -> int:
    name = Path(result.source).name
    return cited.index(name) if name in cited else len(cited)


def stage_conversation(service: KnowledgeService, base: Base, language: str) -> list[AskTurn]:
    """Keep two answered turns in the base's conversation, as a chat model would have given
    them over the base's real search results (no chat model is called), with an Ollama
    provider configured so the Ask view's model picker names one."""
    provider, url, model = DEMO_CHAT_PROVIDER
    service.save_provider(provider, "ollama", base_url=url, models=[model])
    service.choose_chat_model(f"{provider}:{model}")
    service.set_ask_rewrite(base.id, True)
    turns = []
    for question, query, answer, cited in CONVERSATION["zh" if language.startswith("zh") else "en"]:
        results = service.search(base.id, query).results[:4]
        # The documents the canned answer cites get its numbers; the rest follow by rank.
        results.sort(key=partial(_cited_order, cited=cited))
        sources = [AskSource(n, base.id, r) for n, r in enumerate(results, start=1)]
        turn = AskTurn(
            base_id=base.id,
            question=question,
            query=query,
            answer=answer,
            sources=sources,
            chat_model=f"{provider}:{model}",
            state=AnswerState.COMPLETE,
        )
        turns.append(service.save_ask_turn(turn))
    return turns
