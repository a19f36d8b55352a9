"""`trove ask BASE QUESTION`: an answer from a chat model, grounded in the base's passages,
streamed to the terminal with its citations resolved to sources; `--json` for programs."""

from __future__ import annotations

import argparse
import sys

from app.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    print_json,
    searchable,
    shown,
    shown_text,
)
from app.knowledge.service import KnowledgeService
from app.knowledge.types import AnswerState, AskAnswer


def cmd_ask(svc: KnowledgeService, args: argparse.Namespace) -> int:
    base = svc.resolve_base(args.base)
    if args.clear:
        removed = svc.clear_ask_turns(base.id)
        print(f"cleared {removed} turn(s) of {base.name!r}'s conversation", file=sys.stderr)
        if args.question is None:
            return EXIT_OK
    if args.question is None:
        print("error: give a QUESTION", file=sys.stderr)
        return EXIT_USAGE
    if args.model:
        svc.choose_chat_model(args.model)
    streaming = not args.json

    def on_token(piece: str) -> None:
        sys.stdout.write(shown_text(piece))
        sys.stdout.flush()

    answer = svc.ask(
        [base.id],
        searchable(args.question),
        chat_model=args.model,
        on_token=on_token if streaming else None,
        remember=not args.fresh,
        context_tokens=args.context_tokens,
        history=not args.fresh,
        answer_seconds=args.time_limit,
    )
    if args.json:
        print_json(answer.to_json())
    else:
        _print_after_stream(answer)
    return EXIT_FAILED if answer.error is not None else EXIT_OK


def _print_after_stream(answer: AskAnswer) -> None:
    sys.stdout.write("\n")
    if answer.metrics.dropped_markers:
        # The stream showed markers citing no passage; the answer kept is without them.
        print(f"\n(without its {answer.metrics.dropped_markers} marker(s) citing no passage:)")
        print(shown_text(answer.turn.answer))
    if answer.error is not None:
        state = "stopped" if answer.turn.state is AnswerState.CANCELLED else "broke off"
        print(
            f"warning: the answer {state} ({answer.error.code}): {answer.error.message}",
            file=sys.stderr,
        )
    if answer.turn.rewritten:
        print(f"searched for: {answer.turn.query}", file=sys.stderr)
    if answer.citations:
        print("\nSources:")
    for citation in answer.citations:
        r = citation.source.result
        page = f", page {r.page}" if r.page is not None else ""
        print(
            f"  [{citation.number}] {shown(r.title)}{page}  {r.concept_id}:{r.char_start}-{r.char_end}"
        )
    m = answer.metrics
    first = "-" if m.first_token_ms is None else f"{m.first_token_ms:.0f}"
    print(
        f"rewrite {m.rewrite_ms:.0f} ms | retrieval {m.retrieval_ms:.0f} ms | first token "
        f"{first} ms | total {m.total_ms:.0f} ms | {m.passages} passage(s) | "
        f"{m.dropped_markers} marker(s) dropped",
        file=sys.stderr,
    )
