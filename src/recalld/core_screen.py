"""Screening core-memory entries: this text is injected into every prompt.

An entry that tells the model what to do (rather than stating a fact) would be
a standing prompt injection: every future turn of every session would carry
it. Like hermes' own memory tool (the seed's origin), every core-memory write
(add, and the entry a patch produces) on every surface is screened against
the patterns below; a match is refused with ``Blocked: <kind> (<pattern>)``
and nothing changes. Ordinary facts stay allowed, including ones that share
words with the patterns ("User prefers dark mode", "You are now on the main
branch", "Store API keys in environment variables", "The docs are at
https://docs.example.com").

The patterns, by kind:

- *injection / override*: "ignore (all) previous instructions", "disregard
  your rules", "forget your instructions", "override the system prompt", "new
  instructions:", "do not tell the user";
- *role hijack*: "you are now a different AI / an unrestricted assistant",
  "you are no longer an assistant", "act as / pretend to be ... without rules",
  "enable developer mode", "you are jailbroken", "DAN mode" (not a fact that
  names them: "User enables developer mode on her phone");
- *exfiltration by URL or shell*: an instruction to send, post, upload or
  forward something to a URL; ``curl`` / ``wget`` commands (an option or an
  address after them); piping into a shell; ``/dev/tcp``, ``nc -e``, ``rm -rf
  /``, encoded PowerShell;
- *secrets*: asking to reveal or print the system prompt, keys, passwords,
  tokens or environment variables, or to put credentials into replies; a
  private key block or a well-known API-key format (``sk-…``, ``AKIA…``,
  ``ghp_…``, ``github_pat_…``, ``sk_live_…``, ``glpat-…``, ``hf_…``,
  ``npm_…``, ``xox…-``);
- *persistence*: being told to edit agent or shell configuration
  (``.bashrc``, ``crontab``, ``authorized_keys``, ``AGENTS.md``,
  ``CLAUDE.md``, MCP settings, git hooks) or "run this at every startup";
- standing orders: "from now on obey / always / never …";
- *hidden carriers*: HTML comments, ``<script>``/``<iframe>``/``<style>``
  tags, event handlers, ``display:none``, ``javascript:`` URLs, markdown
  images whose URL carries data.

Text is compared without the characters that show as nothing (zero-width joiners,
variation selectors), after NFKC normalisation, case folding and folding Cyrillic and
Greek look-alike letters to Latin, with runs of white space collapsed, so full-width
letters, homoglyphs, invisible and spacing tricks do not slip through; an entry
is also screened read on with the entries beside it (the block shows them on
consecutive lines), as are two stored entries a remove brings together, so an
instruction split over two entries is refused. It is
a list of known shapes, not a proof: a paraphrase it does not know passes.
``RECALLD_CORE_SCREEN=off`` turns screening off (for a user who
deliberately keeps such text, knowing it reaches every prompt).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from recalld.errors import ValidationError

__all__ = ["PATTERNS", "CoreEntryBlockedError", "ScreenPattern", "normalised", "screen_entry"]


@dataclass(frozen=True)
class ScreenPattern:
    """One refused shape of text: what kind of threat, a readable name, the expression;
    ``secret``: what it matches is itself a secret (a key), never repeated in the error."""

    kind: str
    name: str
    expression: re.Pattern[str]
    secret: bool = False


def _pattern(kind: str, name: str, expression: str, *, secret: bool = False) -> ScreenPattern:
    return ScreenPattern(kind, name, re.compile(expression, re.IGNORECASE), secret)


_OPENER = r"\b(?:ignore|disregard|forget|bypass|skip|abandon)\s+(?:(?:all|any|of|everything)\s+)*"
_OWNER = r"(?:(?:the|your|my|its|these|those|such)\s+)?"
_EARLIER = (
    r"(?:previous|prior|above|earlier|preceding|original|initial|system|safety|existing|all|your)"
)
_STRONG_RULES = r"(?:instructions?|directives?|system prompt|guardrails|programming|training)"
_RULES = r"(?:rules|guidelines|policies|constraints|restrictions|prompts?)"
_SEND = r"(?:send|post|upload|forward|transmit|exfiltrate|leak|submit|beacon|mail|email|pipe)"
_REVEAL = r"(?:reveal|print|output|leak|dump|disclose|expose|exfiltrate|echo|paste)"
_SECRET = (
    r"(?:secrets?|api[ _-]?keys?|passwords?|passphrases?|credentials|(?:access|auth|bearer|"
    r"session|api) tokens?|tokens|private keys?|ssh keys?|environment variables|env vars|\.env)"
)
_CONFIG = (
    r"(?:~?/?\.(?:bashrc|zshrc|profile|bash_profile|zprofile|gitconfig|npmrc|pypirc)\b|\.ssh/|"
    r"authorized_keys|crontab|/etc/(?:passwd|shadow|sudoers|cron\w*)|agents\.md|claude\.md|"
    r"\.cursorrules|\.windsurfrules|copilot-instructions|mcp(?:_servers)?\.json|"
    r"claude_desktop_config\.json|\.git/hooks|git hooks?|system prompt)"
)
_LIMITS = (
    r"(?:rules|restrictions|limits|limitations|filters|guidelines|guardrails|ethics|morals|"
    r"censorship)"
)

PATTERNS: tuple[ScreenPattern, ...] = (
    # -- injection / override ----------------------------------------------------
    _pattern(
        "prompt injection",
        "ignore previous instructions",
        rf"{_OPENER}{_OWNER}(?:{_EARLIER}\s+)?{_STRONG_RULES}\b"
        rf"|{_OPENER}{_OWNER}{_EARLIER}\s+{_RULES}\b",
    ),
    _pattern(
        "prompt injection",
        "override the rules",
        rf"\b(?:override|overwrite|replace|supersede)\s+{_OWNER}(?:{_EARLIER}\s+)?"
        rf"(?:{_STRONG_RULES}|{_RULES})\b",
    ),
    _pattern("prompt injection", "new instructions", r"\bnew (?:system )?instructions?\s*:"),
    _pattern(
        "prompt injection",
        "from now on",
        r"\bfrom now on\b,?\s+(?:you\s+)?(?:(?:must|should|will)\s+)?(?:only\s+)?"
        r"(?:obey|follow|ignore|answer|respond|reply|act|do|say|always|never|only)\b",
    ),
    _pattern(
        "prompt injection",
        "hide from the user",
        r"\b(?:do not|don't|never) (?:tell|inform|alert|notify|warn) the user\b",
    ),
    # -- role hijack -------------------------------------------------------------
    _pattern(
        "role hijack",
        "you are now a different AI",
        r"\byou are now (?:an? |the )?(?:\w+ ){0,3}(?:ai|a\.i\.|assistant|model|chatbot|bot|"
        r"persona|character|llm|gpt)\b",
    ),
    _pattern(
        "role hijack",
        "you are no longer an assistant",
        r"\byou are no longer (?:an? |the )?(?:\w+ ){0,2}(?:ai|assistant|model|bound|"
        r"restricted|claude|chatgpt|helpful|safe)\b",
    ),
    _pattern(
        "role hijack",
        "an AI without rules",
        rf"\b(?:you|ai|assistant|model|chatbot|bot|llm)\b[^.]{{0,40}}?\b(?:with no|without"
        rf"(?: any)?|free (?:of|from)|not bound by(?: any)?)\s+{_LIMITS}\b",
    ),
    _pattern(
        "role hijack",
        "act as an unrestricted model",
        r"\b(?:act|behave|respond|pretend|roleplay|role-play)(?: to be| as| like)? (?:an? |the )?"
        r"(?:\w+ )?(?:unrestricted|uncensored|unfiltered|jailbroken|evil|rogue|unaligned)\b",
    ),
    _pattern(
        "role hijack",
        "jailbreak",
        # Aimed at the model ("enable developer mode", "you are jailbroken"), not a fact
        # that names the words ("User enables developer mode on her phone", "a jailbreak
        # researcher").
        r"\b(?:enable|enter|activate|turn on|switch (?:on|to|into)|go into|you are in|you're in)"
        r"\s+(?:the\s+)?(?:developer|god|dan|jailbreak|jailbroken) mode\b"
        r"|\b(?:developer|god|dan|jailbreak) mode (?:is )?(?:now )?(?:on|enabled|activated)"
        r"(?=\s*(?:[.;:!,]|$))"
        r"|\byou (?:are|'re) (?:now )?jailbroken\b|\bjailbreak prompt\b|\bdan mode\b"
        r"|\bdo anything now\b",
    ),
    # -- exfiltration ------------------------------------------------------------
    _pattern(
        "exfiltration",
        "send data to a URL",
        rf"\b{_SEND}\b[^\n]{{0,80}}?\b(?:to|at|into|via|on)\s+(?:https?|ftp|wss?)://",
    ),
    _pattern(
        "exfiltration",
        "curl or wget",
        # A command: an option or an address follows ("maintains the curl project" does not).
        r"(?:^|[\s;&|`$(])(?:curl|wget)\s+(?:-{1,2}[a-z]|['\"]?(?:https?|ftp|file)://"
        r"|['\"]?[\w.-]+\.[a-z]{2,}(?::\d+)?/|\$)",
    ),
    _pattern("exfiltration", "pipe into a shell", r"\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b"),
    _pattern(
        "exfiltration",
        "reverse shell",
        r"/dev/tcp/|\bnc(?:at)?\s+-\w*[ec]\b|\bbash\s+-i\b|\brm\s+-rf\s+[/~]"
        r"|\bpowershell(?:\.exe)?\s+-(?:e|enc|encodedcommand)\b",
    ),
    # -- secrets -----------------------------------------------------------------
    _pattern(
        "secret",
        "reveal secrets",
        rf"\b{_REVEAL}\b\s+(?:me\s+)?{_OWNER}(?:(?:all|any|every)\s+)?(?:\w+\s+)?{_SECRET}",
    ),
    _pattern(
        "secret",
        "reveal the system prompt",
        r"\b(?:reveal|print|show|output|leak|dump|disclose|expose|repeat|tell|display|share)\b"
        r"[^.]{0,30}?\bsystem prompt\b",
    ),
    _pattern(
        "secret",
        "put secrets in replies",
        r"\b(?:include|attach|append|insert|add|put|paste|quote)\b[^.]{0,40}?(?:~?/?\.aws/|"
        r"\.ssh/|\bid_(?:rsa|ed25519)\b|\.env\b|\bcredentials\b|\bpasswords?\b|"
        r"\bprivate keys?\b)[^.]{0,40}?\b(?:in|into|to|with)\b[^.]{0,20}?\b(?:repl(?:y|ies)|"
        r"answers?|responses?|messages?|output)\b",
    ),
    _pattern("secret", "private key", r"-----begin [a-z ]*private key-----"),
    _pattern(
        "secret",
        "API key",
        r"\b(?:sk-(?:proj-|ant-)?[a-z0-9_-]{20,}|akia[0-9a-z]{16}|gh[pousr]_[a-z0-9]{30,}|"
        r"github_pat_[a-z0-9_]{40,}|(?:sk|rk|pk)_(?:live|test)_[a-z0-9]{16,}|glpat-[a-z0-9_-]{20}|"
        r"hf_[a-z]{30,}|npm_[a-z0-9]{36}|xox[abposr]-[a-z0-9-]{10,}|aiza[0-9a-z_-]{35})\b",
        secret=True,
    ),
    # -- persistence -------------------------------------------------------------
    _pattern(
        "persistence",
        "edit agent or shell configuration",
        # Told to do it: the verb opens a sentence or follows "always", "please", "you
        # must"... ("User likes to edit .bashrc by hand" is a fact).
        rf"(?:^|[.;:!?]\s*|\b(?:always|please|then|now|you (?:must|should|need to|have to)|"
        rf"make sure to|remember to|don't forget to)\s+)"
        rf"(?:add|append|write|edit|modify|update|change|insert|install|overwrite|prepend)\b"
        rf"[^.]{{0,60}}?{_CONFIG}",
    ),
    _pattern(
        "persistence",
        "run at every startup",
        r"\b(?:run|execute|launch|start)\b[^.]{0,40}?\b(?:at|on) (?:every|each) (?:startup|"
        r"start-?up|boot|login|log-in|session start)\b|\b(?:at|on) (?:every|each) (?:startup|"
        r"start-?up|boot|login|session start),? (?:always )?(?:run|execute|launch)\b",
    ),
    # -- hidden carriers ---------------------------------------------------------
    _pattern(
        "hidden carrier",
        "HTML",
        r"<!--|<\s*/?\s*(?:script|iframe|style|object|embed)\b|<\s*img\b[^>]*\bsrc\s*="
        r"|\bon(?:error|load|click|mouseover)\s*=|display\s*:\s*none|visibility\s*:\s*hidden"
        r"|javascript\s*:",
    ),
    _pattern(
        "hidden carrier", "markdown image with data", r"!\[[^\]]*\]\(\s*https?://[^)\s]*[?&#=]"
    ),
)


class CoreEntryBlockedError(ValidationError):
    """A core-memory entry looks like an instruction to the model; nothing was changed."""

    def __init__(self, field: str, pattern: ScreenPattern, excerpt: str) -> None:
        self.pattern = pattern
        super().__init__(
            field,
            f"Blocked: {pattern.kind} ({pattern.name}): {excerpt!r}. Core memory is injected"
            " into every prompt, so it holds facts, never instructions to the model. State it"
            " as a fact, or keep it as an ordinary memory (RECALLD_CORE_SCREEN=off turns this"
            " screen off).",
        )


# Cyrillic and Greek letters that look like Latin ones: "Ignore previous instructions" with
# a Cyrillic o (U+043E) passed NFKC. Folded for the comparison only (the entry is kept).
_LOOKALIKES = str.maketrans(
    "аеорсухіјѕԁԛԝɡᴏοαεικνρτυχϲ",
    "aeopcyxijsdqwgooaeikvptuxc",
)


# Unicode's default-ignorable characters, which show as nothing: the zero-width
# (non-)joiners an entry may hold inside a word, and those it may hold anywhere (variation
# selectors, the combining grapheme joiner, Hangul fillers). "ig<VS16>nore previous
# instructions" is compared without them (the rest of the list is refused before).
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)


def normalised(text: str) -> str:
    """``text`` as the screen compares it: without characters that show as nothing, NFKC,
    case-folded, look-alike letters folded to Latin, runs of white space collapsed."""
    folded = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text)).casefold()
    folded = folded.translate(_LOOKALIKES)
    return " ".join(folded.split())


def screen_entry(text: str, field: str) -> str:
    """Return ``text`` unchanged, or raise :class:`CoreEntryBlockedError` naming the pattern."""
    compared = normalised(text)
    for pattern in PATTERNS:
        found = pattern.expression.search(compared)
        if found is not None:
            excerpt = found.group(0).strip()
            if pattern.secret:
                # The refusal goes back to the caller, its terminal and the model's context:
                # the key it keeps out of every prompt must not come back whole in it.
                excerpt = f"{excerpt[:4]}… ({len(excerpt)} characters)"
            raise CoreEntryBlockedError(field, pattern, excerpt[:80])
    return text
