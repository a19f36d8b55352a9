"""Where model files are fetched from: the Hugging Face hub or a mirror of it.

A mirror (`https://hf-mirror.com`, which people in China need) serves the hub's own URL
layout, `{endpoint}/{repo}/resolve/{revision}/{path}`, so only the endpoint changes. The
person's choice is stored with Trove's settings; `TROVE_HF_ENDPOINT`, then `HF_ENDPOINT`
(the variable huggingface_hub reads) override it for one process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from app.providers.interfaces import BAD_URL, INVALID_ARGUMENT, ProviderError

DEFAULT_ENDPOINT = "https://huggingface.co"
ENV_VARIABLES = ("TROVE_HF_ENDPOINT", "HF_ENDPOINT")
# Where an endpoint came from (HubEndpoint.origin).
FROM_DEFAULT = "default"
FROM_SETTING = "setting"
FROM_ARGUMENT = "argument"


@dataclass(frozen=True, slots=True)
class HubEndpoint:
    url: str  # the endpoint downloads use, without a trailing slash
    origin: str  # FROM_DEFAULT, FROM_SETTING, FROM_ARGUMENT or "env:<VARIABLE>"
    stored: str | None  # the person's setting, whether or not something overrides it


def clean_endpoint(url: str) -> str:
    """An http(s) base URL without a trailing slash, or ProviderError(INVALID_ARGUMENT)."""
    text = url.strip().rstrip("/")
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ProviderError(
            INVALID_ARGUMENT,
            f"a hub mirror must be an http:// or https:// address such as "
            f"https://hf-mirror.com, not {url!r}",
            reason=BAD_URL,
            params={"url": url},
        )
    return text


def effective_endpoint(stored: str | None, argument: str | None = None) -> HubEndpoint:
    """The endpoint to use: an explicit argument, else the environment, else the setting."""
    if argument:
        return HubEndpoint(clean_endpoint(argument), FROM_ARGUMENT, stored)
    for name in ENV_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return HubEndpoint(clean_endpoint(value), f"env:{name}", stored)
    if stored:
        return HubEndpoint(clean_endpoint(stored), FROM_SETTING, stored)
    return HubEndpoint(DEFAULT_ENDPOINT, FROM_DEFAULT, stored)


def file_url(endpoint: str, repo: str, revision: str, path: str) -> str:
    return f"{endpoint}/{repo}/resolve/{quote(revision, safe='')}/{quote(path)}"


def host_of(url: str) -> str:
    return urlsplit(url).netloc or url
