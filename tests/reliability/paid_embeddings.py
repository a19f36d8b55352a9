"""A loopback embedding provider that counts what it was paid for, for tests of stops.

`PaidEmbeddings` serves the OpenAI wire format on 127.0.0.1 (tests/providers/fake_api.py)
for every Trove process of a test, and tallies the texts of each embedding request it
*answered*: a provider bills a request it answered, whether or not the client lived to read
the answer. A request can be held (`hold_from`) until the test lets it go, answered or
refused with a 500 (not billed), so a test stops a process at a known batch; `delay_s`
slows every request, so concurrent writers overlap.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.knowledge.service import KnowledgeService
from tests.httpserver import Request
from tests.providers.fake_api import EMBEDDINGS, FakeApi, Fault

PROVIDER = "paidapi"
KEY = "sk-paid-embeddings"
KEY_ENV = "TROVE_KEY_PAIDAPI"
MODEL = f"{PROVIDER}:embed-small"
HOLD_LIMIT_S = 60.0  # a held request is let go after this long whatever happens


class PaidEmbeddings:
    def __init__(self, api: FakeApi, *, delay_s: float = 0.0) -> None:
        self.api = api
        self.delay_s = delay_s
        self.paid: Counter[str] = Counter()
        self.requests = 0  # embedding requests answered
        self.held = threading.Event()  # a request is being held
        self._release = threading.Event()
        self._refuse = False
        self._hold_from: int | None = None
        self._seen = 0
        self._lock = threading.Lock()
        api.chooser = self._choose

    def hold_from(self, number: int) -> None:
        """Hold the `number`-th embedding request (from 1) and every one after it."""
        with self._lock:
            self._hold_from = number

    def release(self, *, refuse: bool = False) -> None:
        """Let held requests go on: answered, or (`refuse`) failed with a 500, not billed."""
        with self._lock:
            self._hold_from = None
            self._refuse = refuse
        self._release.set()

    def texts_paid_twice(self) -> list[str]:
        return [text for text, n in self.paid.items() if n > 1]

    def _choose(self, path: str, request: Request) -> Fault | None:
        if path != EMBEDDINGS:
            return None
        with self._lock:
            self._seen += 1
            hold = self._hold_from is not None and self._seen >= self._hold_from
        if hold:
            self.held.set()
            self._release.wait(HOLD_LIMIT_S)
        elif self.delay_s:
            time.sleep(self.delay_s)  # a slow provider: concurrent writers overlap
        with self._lock:
            if hold and self._refuse:
                return Fault.http(500)
            texts = request.json()["input"]
            self.paid.update([texts] if isinstance(texts, str) else texts)
            self.requests += 1
        return None


@contextmanager
def paid_embeddings(delay_s: float = 0.0) -> Iterator[PaidEmbeddings]:
    """The provider, for processes that find its key in KEY_ENV (set it in the test)."""
    with FakeApi(api_key=KEY, dims=8) as api:
        provider = PaidEmbeddings(api, delay_s=delay_s)
        try:
            yield provider
        finally:
            provider.release()


def configure(service: KnowledgeService, api: FakeApi) -> None:
    service.save_provider(PROVIDER, "openai", base_url=api.base_url, models=["embed-small"])


def write_documents(folder: Path, count: int, sentences: int, tag: str = "d") -> list[Path]:
    """`count` Markdown files of `sentences` sentences each; no sentence repeats anywhere,
    so no chunk text is shared and every one is embedded (and paid for) once."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for n in range(count):
        lines = [
            f"Sentence {i} of {tag}{n} talks about token{tag}{n}x{i} and little else at all."
            for i in range(sentences)
        ]
        path = folder / f"{tag}{n}.md"
        path.write_text(f"# {tag}{n}\n\n" + "\n\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
