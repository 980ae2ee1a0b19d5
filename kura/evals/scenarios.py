"""The synthetic world ``kura eval`` runs in: lessons, a schedule of sessions, transcripts.

A benchmark of a memory layer has to be the same every time it runs, or a difference
between two runs says nothing. So the world is made, not sampled from life: no clock, no
model, no network, and every choice (which task comes next, what the chatter around it
says) comes from one ``random.Random(seed)``. The same seed gives the same sessions, the
same transcripts and, through the real distiller, the same memories.

A **lesson** is a task whose obvious command fails and another one works — the kind of
thing a session learns the expensive way ("make test" fails, "make check" passes) and the
next session should already know. Each pair is built so the rule-based spotter can see it
(``kura.distill.rules``): the same program or most of the same words, a failure line that
names the failure, output that reads as success. One lesson's working command can be
**replaced** midway: from that session on the old command fails too, and the user says so
in words the rule-based distiller reads as a revision of the memory that held the old
command (``kura.distill.contradict``; the sentence shares the old memory's words and
changes at most two of them). Whether the old memory really ends up superseded is
measured by the run, never assumed.

Not every lesson is learned the expensive way. In the **passing** scenario the user tells
the working command in passing — "fyi …, so it builds with X", news rather than a request —
and the session runs it once, successfully. Nothing in those words is one of the
rule-based distiller's shapes (no "remember"/"always"/"never", no correction, no failure),
so kura keeps them only as a span, shown under "Said before"; the agent reads "with X" as
"X works" wherever it meets it, so what holds kura's agent back is only that heading, and
it meets the task cold. The window carries the sentence and the run. That is the case
where the window should win, and the run measures whether it does. A told command is
knowable from the session after it was said.

In the **recurring** scenario the same kind of fact comes up in passing again and again,
in sessions that have nothing else to do with one another (each its own journal, so its
own session id; nobody resumes one). Each fact is said early in a long working session and
followed by more than ``window`` tokens of chatter, so by the time that session ends it has
scrolled out of the agent's working window (``window`` tokens, the same budget the window
arm carries and kura's distiller measures the ladder's TIDE against); the next session
says it again in other words (the same content words, ``kura.text.claim_match``) and it
scrolls out again; a third mentions it in its last lines, where the window still holds it
at the next session, which is the one that needs it. The user always says it; the agent
only acknowledges. This is the world the ladder is for (TIDE: it fell out of a window;
CALLUS: it recurred in an unrelated session), and the window's best case stays in it: the
last mention is recent.

Every session also carries **chatter**: unrelated asks, commands and output, now and then
a small failure fixed on the spot. It makes the history grow as a real one does, so a
window of fixed size holds fewer sessions than there are, and it puts unrelated memories
in the store for recall to see past.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kura.errors import InvalidRequest
from kura.text.tokens import estimate_tokens

KINDS = ("one", "rotated", "passing", "recurring", "long")
TITLES = {
    "one": "one lesson, repeated",
    "rotated": "several lessons, rotated",
    "passing": "a fact said in passing",
    "recurring": "facts said in passing, recurring in unrelated sessions",
    "long": "a long history, one fact replaced midway",
}
TOLD_EVERY = 2  # in the "passing" scenario a new fact is told every other session
WINDOW = 1500  # tokens: the agent's working window, and the budget kura and the window arm get
RECUR_EVERY = 4  # in the "recurring" scenario: said, said again, said last thing, needed


@dataclass(kw_only=True, frozen=True, slots=True)
class Lesson:
    """A task, the command tried without knowing better, and the commands that work: the
    first one, then each one that replaced it; ``gone[i]`` is what ``works[i]`` prints once
    it has been replaced."""

    key: str
    ask: str
    naive: str
    fails: str
    works: tuple[str, ...]
    prints: str
    gone: tuple[str, ...] = ()

    @property
    def candidates(self) -> tuple[str, ...]:
        return (self.naive, *self.works)


@dataclass(frozen=True, slots=True)
class Step:
    """One line of a transcript: ``user``/``assistant`` text, or a ``call`` and what it printed."""

    kind: str
    text: str
    output: str = ""


@dataclass(kw_only=True, frozen=True, slots=True)
class Session:
    """One session: its task, the command that works today, whether that was knowable from
    an earlier session, the chatter around the task, the user's words when the working
    command was replaced today, and the lesson whose working command the user mentioned in
    passing today (told at the end of ``before`` and run once, successfully), or only
    mentioned in passing today, never run (``recurring``)."""

    number: int
    lesson: Lesson
    value: str
    knowable: bool
    before: tuple[Step, ...]
    after: tuple[Step, ...]
    change: str = ""
    told: Lesson | None = None
    mentioned: Lesson | None = None


@dataclass(frozen=True, slots=True)
class Mention:
    """A fact said in passing by the user and never run: in ``wording`` (an index into its
    ``RECURRING`` pair), first thing in the session with more than a window of chatter
    after it, or (``late``) last thing in the session."""

    lesson: Lesson
    wording: int
    late: bool = False

    @property
    def sentence(self) -> str:
        return RECURRING[self.lesson.key][self.wording]


@dataclass(frozen=True, slots=True)
class Scenario:
    kind: str
    title: str
    seed: int
    sessions: tuple[Session, ...]
    change_at: int = 0  # the session where a working command was replaced (0: none)


LESSONS = (
    Lesson(key="tests", ask="Run the test suite.", naive="make test",
           fails="make: *** No rule to make target 'test'.  Stop. (error 2)",
           works=("make check", "make verify"),
           prints="87 passed in 4.21s", gone=(
               "make: *** No rule to make target 'check'.  Stop. (error 2)",)),
    Lesson(key="docs", ask="Build the documentation.", naive="mkdocs build",
           fails="Error: Config file 'mkdocs.yml' does not exist.",
           works=("mkdocs build -f docs/mkdocs.yml",),
           prints="INFO - Documentation built in 1.92 seconds"),
    Lesson(key="dev", ask="Start the dev server.", naive="npm start",
           fails='npm error Missing script: "start"', works=("npm run dev",), prints="VITE ready in 412 ms at http://localhost:5173/"),
    Lesson(key="format", ask="Format the frontend code.", naive="prettier --write src",
           fails="bash: prettier: command not found", works=("npx prettier --write src",),
           prints="23 files formatted, done in 0.8s"),
    Lesson(key="migrate", ask="Apply the database migrations.", naive="alembic upgrade head",
           fails="FAILED: No config file 'alembic.ini' found",
           works=("alembic -c db/alembic.ini upgrade head",),
           prints="INFO  [alembic.runtime.migration] Running upgrade -> 3f2a, done"),
    Lesson(key="types", ask="Type-check the backend.", naive="mypy src",
           fails="error: Cannot find implementation or library stub for module named 'src'",
           works=("mypy -p app",), prints="Success: no issues found in 42 source files"),
    Lesson(key="lint", ask="Lint the shell scripts.", naive="shellcheck deploy.sh",
           fails="deploy.sh: openBinaryFile: does not exist (No such file or directory)",
           works=("shellcheck scripts/deploy.sh",), prints="scripts/deploy.sh: ok, 0 warnings"),
    Lesson(key="package", ask="Build the release package.", naive="python -m build",
           fails="ERROR: No module named build", works=("uv run python -m build",),
           prints="Successfully built kura-0.4.0.tar.gz"),
)  # fmt: skip

# the working command as a user mentions it in passing: news, not a request, a rule or a correction
PASSING = {
    "docs": "fyi the documentation build takes its config from docs/mkdocs.yml now, "
            "so it builds with mkdocs build -f docs/mkdocs.yml",
    "dev": "by the way the dev server is a vite app these days, it comes up with npm run dev",
    "format": "the frontend code gets its prettier from the dev dependencies, nothing global, "
              "so we format it with npx prettier --write src",
    "migrate": "the alembic config for the database migrations moved under db/ in the repo split, "
               "so they go in with alembic -c db/alembic.ini upgrade head",
    "types": "the backend is one package called app now, and we type-check it with mypy -p app",
}  # fmt: skip
TOLD_REPLY = "Noted, and I ran it once: it went through."
# the same facts as news that keeps coming up: two wordings each, the same content words
# (``kura.text.claim_match.relation`` reads each as the other's restatement), never a request
RECURRING = {
    "docs": ("the documentation build takes its config from docs/mkdocs.yml now, "
             "so it builds with mkdocs build -f docs/mkdocs.yml",
             "the documentation build takes its config from docs/mkdocs.yml, "
             "it builds with mkdocs build -f docs/mkdocs.yml these days"),
    "dev": ("the dev server is a vite app, it comes up with npm run dev",
            "the dev server comes up with npm run dev, it is a vite app"),
    "format": ("the frontend code gets its prettier from the dev dependencies, "
               "so we format it with npx prettier --write src",
               "we format the frontend code with npx prettier --write src, "
               "its prettier comes from the dev dependencies"),
    "migrate": ("the alembic config for the database migrations moved under db/, "
                "so they go in with alembic -c db/alembic.ini upgrade head",
                "the database migrations go in with alembic -c db/alembic.ini upgrade head, "
                "as the alembic config moved under db/"),
    "types": ("the backend is one package called app, and we type-check it with mypy -p app",
              "we type-check the backend with mypy -p app, as it is one package called app"),
}  # fmt: skip
HEARD_REPLY = "Good to know."

# (ask, reply, command, output); {n} {m} {f} {b} are filled from the seed
CHATTER = (
    ("What changed since yesterday?", "Three commits landed on {b}.", "git log --oneline -3",
     "a1{n}f3 tidy the parser; 9c{m}e0 bump httpx; 77{n}d1 fix a typo in the README"),
    ("Where is the config loaded?", "It is read in one place.", "grep -rn load_config app",
     "app/config.py:{n}: def load_config(path):"),
    ("Rename the helper in {f} to split_fields.", "Renamed it and updated both call sites.",
     "git diff --stat", "2 files changed, {m} insertions(+), {m} deletions(-)"),
    ("How big is the repository now?", "About what it was last week.", "du -sh .", "{n}M ."),
    ("What branch am I on?", "You are on {b}.", "git branch --show-current", "{b}"),
    ("Show me the open TODOs in {f}.", "There are a few, none urgent.", "grep -n TODO app/{f}",
     "{n}: # TODO: handle empty rows; {m}: # TODO: cache the lookup"),
    ("Summarise the last review comments.", "Two asked for clearer names, one for a test.",
     "gh pr view --comments", "{m} comments; latest: please rename tmp_rows"),
    ("Check the disk space on the build box.", "Plenty left.", "df -h /srv",
     "/dev/sda1  {n}G  {m}G  {n}% /srv"),
    ("Add a line about the new flag to the changelog.", "Added it under Unreleased.",
     "git diff --stat CHANGELOG.md", "1 file changed, 1 insertion(+)"),
    ("Which Python version is in the image?", "The image pins it.", "grep -n python Dockerfile",
     "1: FROM python:3.{m}-slim"),
)  # fmt: skip
# small failures fixed on the spot: (ask, command that fails, its output, the fix, its output)
SLIPS = (
    ("Open the setup notes.", "cat docs/setup.md", "cat: docs/setup.md: No such file or directory",
     "cat docs/SETUP.md", "# Setup: install uv, then run the bootstrap script"),
    ("List the fixtures.", "ls tests/fixture", "ls: cannot access 'tests/fixture': No such file or directory",
     "ls tests/fixtures", "orders.csv  users.csv  empty.csv"),
    ("Show the nginx config.", "cat /etc/nginx/site.conf",
     "cat: /etc/nginx/site.conf: No such file or directory", "cat /etc/nginx/sites-enabled/app.conf",
     "server { listen 80; server_name app.local; }"),
)  # fmt: skip
FILES = ("parser.py", "orders.py", "cli.py", "report.py", "storage.py")
BRANCHES = ("main", "feature/parser", "fix/orders")


def build(kind: str, sessions: int, seed: int, *, window: int = WINDOW) -> Scenario:
    """The scenario ``kind`` (one of ``KINDS``) over ``sessions`` sessions; ``window`` is the
    agent's working window in tokens, which what ``recurring`` says early must scroll out of."""
    if kind not in KINDS:
        raise InvalidRequest(f"no scenario {kind!r} (known: {', '.join(KINDS)})")
    if sessions < 2:
        raise InvalidRequest("a scenario needs at least two sessions: one to learn, one to remember")
    rng = random.Random(f"{kind}:{seed}")
    if kind == "passing":
        plan, told = _passing(sessions, rng)
        return make(kind, TITLES[kind], plan, seed=seed, told=told, rng=rng)
    if kind == "recurring":
        plan, mentions = _recurring(sessions, rng)
        return make(kind, TITLES[kind], plan, seed=seed, mentions=mentions, window=window, rng=rng)
    plan, change_at = _plan(kind, sessions, rng)
    return make(kind, TITLES[kind], plan, seed=seed, change_at=change_at, rng=rng)


def make(
    kind: str,
    title: str,
    plan: Sequence[Lesson],
    *,
    seed: int,
    change_at: int = 0,
    told: Mapping[int, Lesson] | None = None,
    mentions: Mapping[int, Mention] | None = None,
    window: int = WINDOW,
    rng: random.Random | None = None,
) -> Scenario:
    """Sessions whose tasks need the lessons of ``plan`` in order; at session ``change_at``
    the working command of that session's lesson is replaced by its next one; in session
    ``n`` of ``told`` the user mentions that lesson's working command in passing and it is
    run; in session ``n`` of ``mentions`` it is only said (early, then more than ``window``
    tokens of chatter; or last thing)."""
    rng = rng or random.Random(f"{kind}:{seed}")
    changed = plan[change_at - 1].key if change_at else ""

    def working(lesson: Lesson, number: int) -> str:
        return lesson.works[1 if change_at and number >= change_at and lesson.key == changed else 0]

    known: dict[str, str] = {}
    out = []
    for number, lesson in enumerate(plan, start=1):
        value, said = working(lesson, number), (told or {}).get(number)
        heard = (mentions or {}).get(number)
        change = f"No, {lesson.works[0]} fails now: use {value}." if number == change_at else ""
        before = chatter(rng, rng.randint(1, 3)) + (telling(said, working(said, number)) if said else ())
        after = chatter(rng, rng.randint(0, 2))
        if heard is not None and heard.late:
            after += hearing(heard)
        elif heard is not None:
            before = hearing(heard) + scroll(rng, window) + before
        knowable = known.get(lesson.key) == value
        out.append(
            Session(
                number=number,
                lesson=lesson,
                value=value,
                knowable=knowable,
                before=before,
                after=after,
                change=change,
                told=said,
                mentioned=heard.lesson if heard else None,
            )
        )
        known[lesson.key] = value
        for fact in (said, heard.lesson if heard else None):
            if fact is not None:
                known[fact.key] = working(fact, number)
    return Scenario(kind, title, seed, tuple(out), change_at)


def telling(lesson: Lesson, value: str) -> tuple[Step, ...]:
    """The user mentions ``value`` in passing and the agent runs it once, successfully."""
    said = Step("user", PASSING[lesson.key])
    return (said, Step("call", value, lesson.prints), Step("assistant", TOLD_REPLY))


def hearing(mention: Mention) -> tuple[Step, ...]:
    """The user says the fact in passing; the agent acknowledges it and does not repeat it."""
    return (Step("user", mention.sentence), Step("assistant", HEARD_REPLY))


def scroll(rng: random.Random, window: int) -> tuple[Step, ...]:
    """Chatter until more than ``window`` tokens of it have been said: whatever came before
    it is out of the working window by the time it ends."""
    steps: tuple[Step, ...] = ()
    while tokens(steps) <= window:
        steps += chatter(rng, 1)
    return steps


def tokens(steps: Sequence[Step]) -> int:
    """What ``steps`` cost, counted turn by turn (text and output apart: the least any
    reading of them can count)."""
    return sum(estimate_tokens(step.text) + estimate_tokens(step.output) for step in steps)


def _plan(kind: str, sessions: int, rng: random.Random) -> tuple[list[Lesson], int]:
    """Which lesson each session's task needs, and where the replacement happens."""
    tests = LESSONS[0]
    if kind == "one":
        return [tests] * sessions, 0
    if kind == "rotated":
        return [rng.choice(LESSONS[:6]) for _ in range(sessions)], 0
    plan = [rng.choice(LESSONS) for _ in range(sessions)]
    change_at = max(2, sessions // 2)
    for number in (1, change_at, sessions):  # learnt early, replaced midway, needed again at the end
        plan[number - 1] = tests
    return plan, change_at


def _passing(sessions: int, rng: random.Random) -> tuple[list[Lesson], dict[int, Lesson]]:
    """A fact told in passing every other session, from the first; the session right after
    each telling needs the fact just told, every other session one heard before (or the
    test suite, which is learned the expensive way in session 1)."""
    facts = [lesson for lesson in LESSONS if lesson.key in PASSING]
    told = {1 + TOLD_EVERY * i: fact for i, fact in enumerate(facts) if 1 + TOLD_EVERY * i < sessions}
    plan: list[Lesson] = []
    for number in range(1, sessions + 1):
        heard = [fact for at, fact in told.items() if at < number]
        plan.append(told[number - 1] if number - 1 in told else rng.choice([LESSONS[0], *heard]))
    return plan, told


def _recurring(sessions: int, rng: random.Random) -> tuple[list[Lesson], dict[int, Mention]]:
    """Each fact in a run of ``RECUR_EVERY`` sessions: said early (it scrolls out), said
    again in other words early in the next session (it scrolls out again), said last thing in
    the one after, needed in the next; every other task needs the test suite or a fact
    already needed once."""
    facts = [lesson for lesson in LESSONS if lesson.key in RECURRING]
    mentions: dict[int, Mention] = {}
    needs: dict[int, Lesson] = {}
    for i, fact in enumerate(facts):
        at = 1 + RECUR_EVERY * i
        for offset, mention in enumerate((Mention(fact, 0), Mention(fact, 1), Mention(fact, 0, late=True))):
            if at + offset <= sessions:
                mentions[at + offset] = mention
        needs[at + RECUR_EVERY - 1] = fact
    plan: list[Lesson] = []
    for number in range(1, sessions + 1):
        needed = [fact for at, fact in needs.items() if at < number]
        plan.append(needs[number] if number in needs else rng.choice([LESSONS[0], *needed]))
    return plan, mentions


def chatter(rng: random.Random, count: int) -> tuple[Step, ...]:
    """``count`` unrelated exchanges; about one in five is a small failure fixed at once."""
    steps: list[Step] = []
    for _ in range(count):
        if rng.random() < 0.2:
            ask, bad, error, good, output = rng.choice(SLIPS)
            steps += [Step("user", ask), Step("call", bad, error), Step("call", good, output)]
            continue
        ask, reply, command, output = rng.choice(CHATTER)
        fill = {
            "n": rng.randint(10, 99),
            "m": rng.randint(2, 9),
            "f": rng.choice(FILES),
            "b": rng.choice(BRANCHES),
        }
        steps += [
            Step("user", ask.format(**fill)),
            Step("call", command.format(**fill), output.format(**fill)),
            Step("assistant", reply.format(**fill)),
        ]
    return tuple(steps)


def task_steps(session: Session, first: str) -> tuple[Step, ...]:
    """The task as it went when ``first`` was tried first: at once, or the expensive way —
    the failure, then (when the command was replaced today) the user's correction, then
    the working call."""
    lesson = session.lesson
    steps = [Step("user", lesson.ask), Step("assistant", "On it.")]
    if first == session.value:
        return (*steps, Step("call", first, lesson.prints))
    steps.append(Step("call", first, _failure(lesson, first)))
    if session.change:
        steps.append(Step("user", session.change))
    return (*steps, Step("call", session.value, lesson.prints))


def _failure(lesson: Lesson, command: str) -> str:
    if command in lesson.works[:-1]:
        return lesson.gone[lesson.works.index(command)]
    return lesson.fails


def transcript(session: Session, first: str) -> tuple[Step, ...]:
    return (*session.before, *task_steps(session, first), *session.after)


def chat_rows(steps: tuple[Step, ...]) -> list[dict[str, object]]:
    """The transcript in the ``chat`` JSONL shape the distiller reads."""
    rows: list[dict[str, object]] = []
    for n, step in enumerate(steps, start=1):
        if step.kind != "call":
            rows.append({"role": step.kind, "content": step.text})
            continue
        arguments = json.dumps({"command": step.text})
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "Bash", "arguments": arguments}}
        rows += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": step.output},
        ]
    return rows


def render(number: int, steps: tuple[Step, ...]) -> str:
    """The transcript as a window carries it: one line a turn, a call and its output together."""
    lines = [f"--- session {number} ---"]
    for step in steps:
        lines.append(f"$ {step.text} → {step.output}" if step.kind == "call" else f"{step.kind}: {step.text}")
    return "\n".join(lines)
