"""Breadth from a maintained detector: detect-secrets' vendor plugins, under kura's one policy.

kura's own table (``kura.text.secrets``) knows the shapes it must judge with care — a
``password = …`` pair, a URL's credentials, a long opaque value — and decides what is prose.
New vendors' key formats appear every month, though, and a table kept by hand falls
behind; detect-secrets (Yelp) keeps a plugin per vendor (Slack webhooks, SendGrid, Azure
storage keys, Twilio, Discord, Telegram, Mailchimp, Square, IBM, …). kura asks it the same
question it asks its own rules and names what it finds by the plugin's kind.

Only its vendor plugins are used, and only through ``analyze_string``: ``analyze_line`` may
call the vendor to verify a key (a network request with the secret in it), and its
entropy, keyword, basic-auth and IP plugins would replace kura's own judgement of prose and
placeholders (an IP address is no secret). Importing it costs about 0.1 s (it loads
``requests``), which a shell hook must not pay on every prompt, so it is imported the first
time a text holds something a vendor's token could be — a run of 16 or more token
characters with a digit in it — and never for plain prose.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_PLUGINS = (
    ("artifactory", "ArtifactoryDetector"), ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"), ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"), ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"), ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"), ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"), ("npm", "NpmDetector"), ("openai", "OpenAIDetector"),
    ("pypi_token", "PypiTokenDetector"), ("sendgrid", "SendGridDetector"), ("slack", "SlackDetector"),
    ("softlayer", "SoftlayerDetector"), ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"), ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)  # fmt: skip
_CANDIDATE = re.compile(r"[\w+/=.:-]{16,}")
# What must be in a text before a slow plugin (a keyword-anchored or lookbehind-heavy pattern) is
# worth running; the others are cheap enough to run on every candidate line.
_GATES = {
    "ArtifactoryDetector": re.compile(r"AKC|AP[\dA-F]"),
    "AWSKeyDetector": re.compile(r"(?i)aws|A(?:KIA|SIA|3T|GPA|IDA|ROA|IPA|NPA|NVA)"),
    "CloudantDetector": re.compile(r"(?i)cloudant|\bcl(?:ou)?[-_]?(?:api)?[-_]?(?:key|pwd|pw|pass|token)"),
    "IbmCloudIamDetector": re.compile(r"[\w-]{44}"),
    "IbmCosHmacDetector": re.compile(r"[a-f0-9]{48}"),
    "MailchimpDetector": re.compile(r"-us\d"),
    "SlackDetector": re.compile(r"(?i)xox|hooks\.slack\.com"),
    "SoftlayerDetector": re.compile(r"(?i)softlayer|[a-z0-9]{64}"),
}


def candidate(text: str) -> bool:
    """Whether ``text`` holds a run a vendor's token could be (the cheap test before the import)."""
    return any(any(c.isdigit() for c in run) for run in _CANDIDATE.findall(text))


def found(text: str) -> list[tuple[str, str]]:
    """(kind, secret) of every vendor token in ``text``, longest first. Only the lines that
    hold a candidate run are read, all at once (a plugin's pattern never needs two lines)."""
    lines = "\n".join(line for line in text.splitlines() if candidate(line))
    if not lines:
        return []
    hits: set[tuple[str, str]] = set()
    for plugin in _plugins():
        gate = _GATES.get(type(plugin).__name__)
        if gate is None or gate.search(lines):
            hits.update((str(plugin.secret_type), value) for value in plugin.analyze_string(lines) if value)
    return sorted(hits, key=lambda hit: -len(hit[1]))


@cache
def _plugins() -> tuple[Any, ...]:
    from detect_secrets import plugins

    for module, _ in _PLUGINS:
        __import__(f"detect_secrets.plugins.{module}")
    return tuple(getattr(getattr(plugins, module), name)() for module, name in _PLUGINS)
