"""Reconciling a large linked folder: time and embedding calls, printed as one JSON line.

    python tests/bench/sync.py [--files 10000] [--changed 0.01] [--renamed 0.01]

A folder of FILES small Markdown files is linked to a hybrid base whose embedding model is
served by a loopback provider that counts requests and embedded texts (tests/providers/
fake_api.py), and indexed (the reference). Then, each timed on its own:

- a sync with nothing changed (stat only: no file read, nothing embedded);
- a sync after CHANGED x FILES files were edited (one new sentence each);
- a sync after RENAMED x FILES files were renamed or moved into a subfolder;
- the path before linked folders, for the same 1 % edit: `reindex` of the folder root
  (every file read and chunked again; vectors reused by chunk hash).

Everything runs in this process, jobs drained in-thread with in-process reading, so the
times compare like with like.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

WORDS = [
    "river", "stone", "cloud", "lantern", "meadow", "copper", "violet", "harbor", "quartz",
    "falcon", "timber", "ember", "glacier", "saffron", "orchid", "canyon", "willow", "cobalt",
]  # fmt: skip


def _text(rng: random.Random, n: int) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120)))
    return f"# Note {n}\n\nThis note is number {n} and tagged tag{n}. {body}.\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--renamed", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()

    from app.knowledge.jobs.reader_pool import InlineExtraction
    from app.knowledge.service import KnowledgeService
    from tests.providers.fake_api import EMBEDDINGS, FakeApi

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp, FakeApi(dims=32) as api:
        folder, home = Path(tmp) / "folder", Path(tmp) / "home"
        for n in range(args.files):
            sub = folder / f"d{n % 50:02d}"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / f"note{n}.md").write_text(_text(rng, n), encoding="utf-8")
        svc = KnowledgeService(home, extraction=InlineExtraction())

        def texts() -> int:
            return sum(len(r.json()["input"]) for r in api.requests(EMBEDDINGS))

        def timed(step: str, action: object) -> dict[str, float | int]:
            calls, embedded = api.hits(EMBEDDINGS), texts()
            started = time.perf_counter()
            assert callable(action)
            action()
            svc.run_pending_jobs(base.id)
            return {
                "seconds": round(time.perf_counter() - started, 3),
                "embeddingRequests": api.hits(EMBEDDINGS) - calls,
                "textsEmbedded": texts() - embedded,
            }

        try:
            svc.save_provider("loop", "openai", base_url=api.base_url, models=["embed-small"])
            base = svc.create_base("bench", embedding_model="loop:embed-small")
            figures: dict[str, object] = {"files": args.files}
            holder: list[str] = []

            def link() -> None:
                holder.extend(i.id for i in svc.add_linked_folders(base.id, [folder]).added)

            figures["initialIndex"] = timed("index", link)
            (root_id,) = holder
            sync = lambda: svc.request_sync(base.id, [root_id])  # noqa: E731
            figures["syncUnchanged"] = timed("unchanged", sync)

            all_files = sorted(folder.rglob("*.md"))
            changed = rng.sample(all_files, int(args.files * args.changed))
            for path in changed:
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(
                        f"\nAn added sentence about {rng.choice(WORDS)} number {rng.random()}.\n"
                    )
            figures["syncChanged"] = {"files": len(changed), **timed("changed", sync)}

            rest = [p for p in all_files if p not in set(changed)]
            renamed = rng.sample(rest, int(args.files * args.renamed))
            (folder / "moved").mkdir()
            for k, path in enumerate(renamed):
                target = folder / "moved" / path.name if k % 2 else path.with_name("r-" + path.name)
                path.rename(target)
            figures["syncRenamed"] = {"files": len(renamed), **timed("renamed", sync)}

            for path in rng.sample(sorted(folder.rglob("*.md")), len(changed)):
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(f"\nAnother sentence about {rng.choice(WORDS)} {rng.random()}.\n")
            figures["reindexChanged"] = {
                "files": len(changed),
                **timed("reindex", lambda: svc.reindex(base.id, [root_id])),
            }
            items = [i for i in svc.list_items(base.id) if i.parent_id == root_id]
            figures["itemsAfter"] = len(items)
            figures["duplicates"] = len(items) - len({i.source for i in items})
            figures["doctorProblems"] = len(svc.doctor(base.id).report.problems)
            figures["syncChangedVsReindex"] = round(
                figures["syncChanged"]["seconds"] / figures["reindexChanged"]["seconds"],
                4,  # type: ignore[index]
            )
        finally:
            svc.close()
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
