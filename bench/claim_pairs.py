"""Claims that are one and claims that are two, on pairs written for it: false merges and
misses of the ladder's "same claim" rule and of the distiller's "this corrects that" rule,
before (the content-word rule alone) and after (plus ``kura.text.same_claim`` and
``kura.text.moves``).

    python bench/claim_pairs.py [--show]      # --show: name every pair that went wrong

- **same**: the same fact said again in other words, sharing an identifier (the ladder must
  join them: TIDE + CALLUS);
- **two**: two facts about one identifier (joining them is a false merge);
- **moves**: a memory and a sentence reporting that it moved on (must be a correction);
- **not moves**: a memory and a sentence that shares words with it or reports another move
  (a correction there is a false one).

A same/two pair is tried in both orders (the ladder sees whichever session came first as
the waiting item), and counts as joined when either order joins it.
"""

# ruff: noqa: E501  (a table of sentence pairs, one pair a line)
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kura.distill.ladder import _Index, _numbers, _read
from kura.text.claim_match import relate, revised
from kura.text.moves import moved

SAME = [
    ("The artifacts bucket is called acme-builds-eu now.",
     "The deploy job pushes its artifacts to acme-builds-eu, the bucket we use now."),
    ("The staging database is db-staging.internal.", "We connect to the staging database at db-staging.internal."),
    ("Our internal package index lives at pypi.corp.example/simple.",
     "pip pulls internal packages from the package index at pypi.corp.example/simple."),
    ("The billing service is called ledger-svc.", "Invoices are produced by the billing service, ledger-svc."),
    ("Feature flags are stored in the flags_v2 table.", "The flags_v2 table holds every feature flag we ship."),
    ("The on-call rotation is tracked in the ops-oncall channel.",
     "Whoever is on call posts in ops-oncall, the rotation channel."),
    ("Nightly builds run on the runner named ci-big-1.", "The big CI runner ci-big-1 takes the nightly builds."),
    ("The search cluster is es-prod-eu.", "Search queries go to the es-prod-eu cluster."),
    ("Secrets live in the vault path kv/ferry/prod.", "The ferry prod secrets are read from kv/ferry/prod in vault."),
    ("The mobile app's bundle id is com.ferry.app.", "We ship the mobile app under the bundle id com.ferry.app."),
    ("The docs site is built from the docs-site repo.", "The docs-site repo is where the docs site gets built from."),
    ("Error reports go to the sentry project ferry-web.",
     "The sentry project for ferry-web collects our error reports."),
    ("The load balancer in front of the API is lb-api-2.", "API traffic enters through the load balancer lb-api-2."),
    ("The analytics warehouse is named wh_events.", "Events land in wh_events, the analytics warehouse."),
    ("The ferry CLI config file is ~/.ferry/config.toml.", "The CLI reads its config file from ~/.ferry/config.toml."),
    ("Image uploads are kept in the bucket ferry-media.", "The ferry-media bucket stores the uploaded images."),
    ("The cron job cleanup-sessions deletes expired sessions.",
     "Expired sessions are deleted by cleanup-sessions, a cron job."),
    ("The GraphQL gateway runs on port 4000.", "Port 4000 is where the GraphQL gateway listens."),
    ("Our Slack alerts channel is #alerts-prod.", "Alerts are posted to #alerts-prod on Slack."),
    ("The payments webhook endpoint is /hooks/stripe.", "Stripe calls the payments webhook endpoint at /hooks/stripe."),
    ("The replica database is db-replica-02.", "Read-only queries use the replica database db-replica-02."),
    ("The monorepo's main branch is trunk-main.", "Merges go to trunk-main, the main branch of the monorepo."),
    ("The load test suite lives in perf/k6.", "The scripts of the load test suite are under perf/k6."),
    ("Production runs in the fly-prod-ams app.", "The fly-prod-ams app is what production runs in these days."),
]  # fmt: skip
TWO = [
    ("The artifacts bucket acme-builds-eu is private to the build account.",
     "Versioning is switched on for the artifacts bucket acme-builds-eu."),
    ("The staging database db-staging.internal runs Postgres 16.",
     "The staging database db-staging.internal is wiped every Sunday."),
    ("The billing service ledger-svc is written in Go.", "The billing service ledger-svc owns the invoices table."),
    ("The flags_v2 table is replicated to the analytics warehouse.",
     "The flags_v2 table has a row per flag and environment."),
    ("The search cluster es-prod-eu has three data nodes.", "The search cluster es-prod-eu is upgraded every quarter."),
    ("The ci-big-1 runner has 64 GB of memory.", "The ci-big-1 runner is shared with the data team."),
    ("The mobile app bundle id com.ferry.app is registered to the company account.",
     "The mobile app bundle id com.ferry.app is signed with the team certificate."),
    ("The sentry project ferry-web drops events older than 30 days.",
     "The sentry project ferry-web alerts the frontend team."),
    ("The load balancer lb-api-2 terminates TLS.", "The load balancer lb-api-2 sits in eu-west-1."),
    ("The analytics warehouse wh_events is refreshed hourly.",
     "The analytics warehouse wh_events is the source of product dashboards."),
    ("The cron job cleanup-sessions runs at midnight.", "The cron job cleanup-sessions logs to syslog."),
    ("The GraphQL gateway on port 4000 caches queries.",
     "The GraphQL gateway on port 4000 needs a restart after deploys."),
    ("The Slack channel #alerts-prod is muted at night.", "The Slack channel #alerts-prod gets pager alerts."),
    ("The webhook endpoint /hooks/stripe verifies signatures.", "The webhook endpoint /hooks/stripe is rate limited."),
    ("The replica database db-replica-02 lags the primary by seconds.",
     "The replica database db-replica-02 serves the reporting queries."),
    ("The main branch trunk-main is protected.", "The main branch trunk-main deploys to staging on every merge."),
    ("The load test suite in perf/k6 runs before releases.", "The load test suite in perf/k6 needs k6 version 0.50."),
    ("The image bucket ferry-media stores uploaded images.",
     "The image bucket ferry-media stores uploaded images and is public."),
    ("The vault path kv/ferry/prod holds the database password.", "The vault path kv/ferry/prod is rotated monthly."),
    ("Deploys of the fly-prod-ams app need an approval.", "The fly-prod-ams app serves the Amsterdam region."),
]  # fmt: skip
# written after the rule above was settled, and not tuned on
HELD_SAME = [
    ("The payroll export runs from the job payroll-sync.", "payroll-sync is the job that runs the payroll export."),
    ("Our container registry is registry.ferry.dev.",
     "Images are pushed to the container registry at registry.ferry.dev."),
    ("The feature store lives in the fs_online database.",
     "The fs_online database is where the feature store lives now."),
    ("The team's runbook is in docs/runbooks/oncall.md.", "Read docs/runbooks/oncall.md for the team runbook."),
    ("The web frontend is deployed as the ferry-web-prod service.",
     "The ferry-web-prod service serves the web frontend."),
    ("Our DNS zone is managed in the dns-infra repository.",
     "Changes to the DNS zone go through the dns-infra repository."),
    ("The queue for email jobs is called mail_outbox.", "Email jobs wait in the mail_outbox queue."),
    ("The grafana dashboard for latency is api-latency-v3.", "Latency lives on the api-latency-v3 grafana dashboard."),
    ("The test database is seeded by scripts/seed_db.py.", "scripts/seed_db.py seeds the test database."),
    ("The staging domain is staging.ferry.dev.", "The staging site answers on staging.ferry.dev."),
]  # fmt: skip
HELD_TWO = [
    ("The payroll-sync job runs every Friday.", "The payroll-sync job writes to the finance share."),
    ("The container registry registry.ferry.dev requires a login.",
     "The container registry registry.ferry.dev keeps images for a year."),
    ("The fs_online database is backed up nightly.", "The fs_online database is owned by the ML team."),
    ("docs/runbooks/oncall.md covers database failover.", "docs/runbooks/oncall.md was last reviewed by Priya."),
    ("The ferry-web-prod service has two replicas.", "The ferry-web-prod service reads its config from consul."),
    ("The dns-infra repository uses terraform.", "The dns-infra repository needs two approvals for merges."),
    ("The mail_outbox queue is drained by three workers.", "The mail_outbox queue retries failed sends."),
    ("The api-latency-v3 dashboard alerts above 500 ms.", "The api-latency-v3 dashboard is pinned in the team channel."),
    ("scripts/seed_db.py needs the faker package.", "scripts/seed_db.py takes a few minutes on a laptop."),
    ("staging.ferry.dev is behind basic auth.", "staging.ferry.dev is reset every Monday."),
]  # fmt: skip
MOVES = [
    ("App hosting. The app runs on Heroku", "We moved the app off Heroku to Fly.io last month."),
    ("CI. CI runs on Travis CI", "We switched CI from Travis to GitHub Actions."),
    ("Database. The database is Postgres 12", "We migrated the database from Postgres 12 to Postgres 16."),
    ("Email. Emails are sent through SendGrid", "We replaced SendGrid with Postmark for emails."),
    ("Logs. Logs are shipped to Papertrail", "Logs no longer go to Papertrail, they go to Loki now."),
    ("Frontend build. The frontend is built with webpack", "The frontend uses Vite instead of webpack now."),
    ("Tickets. We use Jira for tickets", "We dropped Jira for Linear for tickets."),
    ("Secrets. Secrets are kept in a .env file", "We moved the secrets out of the .env file into Vault."),
    ("Docs hosting. The docs are hosted on Read the Docs", "The docs moved from Read the Docs to GitHub Pages."),
    ("Staging region. The staging cluster lives in us-east-1",
     "The staging cluster was relocated from us-east-1 to eu-west-3."),
    ("Packages. Package management uses npm", "We switched package management from npm to pnpm."),
    ("Error tracking. Error tracking is Rollbar", "Error tracking moved off Rollbar onto Sentry."),
]  # fmt: skip
NOT_MOVES = [
    ("App hosting. The app runs on Heroku", "We moved the meeting from Monday to Tuesday."),
    ("App hosting. The app runs on Heroku", "We moved the CI runners off Heroku to GitHub Actions."),
    ("CI. CI runs on Travis CI", "Travis CI was slow again today."),
    ("Database. The database is Postgres 12", "We migrated the analytics job from cron to Airflow."),
    ("Email. Emails are sent through SendGrid", "We replaced the logo with a new one."),
    ("Logs. Logs are shipped to Papertrail", "Papertrail no longer supports our old plan, so we upgraded."),
    ("Frontend build. The frontend is built with webpack", "The backend uses gunicorn instead of uwsgi."),
    ("Secrets. Secrets are kept in a .env file", "We moved the README out of the docs folder into the root."),
    ("Docs hosting. The docs are hosted on Read the Docs", "The docs moved to a new theme last week."),
    ("Packages. Package management uses npm", "We switched the test runner from jest to vitest."),
    ("Error tracking. Error tracking is Rollbar",
     "We switched from Rollbar's free plan to the team plan for error tracking."),
    ("Staging region. The staging cluster lives in us-east-1",
     "The staging cluster's logs moved from us-east-1 to eu-west-3."),
]  # fmt: skip


def joined_before(first: str, then: str) -> bool:
    """The ladder's rule before: the content-word "same" and the same numbers."""
    return relate(_read(then), _read(first)) == "same" and _numbers(then) == _numbers(first)


def joined_after(first: str, then: str) -> bool:
    """The ladder's rule now: its own index, as scratch uses it."""
    index = _Index()
    index.add("first", first, first)
    return index.same(then) == "first"


def joined(rule: object, a: str, b: str) -> bool:
    return bool(rule(a, b) or rule(b, a))  # type: ignore[operator]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="name every pair that went wrong")
    show = parser.parse_args().show
    rows = []
    for name, rule in (("before", joined_before), ("after", joined_after)):
        misses = [p for p in SAME if not joined(rule, *p)]
        merges = [p for p in TWO if joined(rule, *p)]
        rows.append((f"ladder same claim, {name}", len(SAME), misses, len(TWO), merges))
        misses = [p for p in HELD_SAME if not joined(rule, *p)]
        merges = [p for p in HELD_TWO if joined(rule, *p)]
        rows.append((f"  held-out pairs, {name}", len(HELD_SAME), misses, len(HELD_TWO), merges))

    def corrects(with_moves: bool, memory: str, said: str) -> bool:
        claims = [("m", memory)]
        return bool(revised(said, claims) or (with_moves and moved(said, claims)))

    for name, with_moves in (("before", False), ("after", True)):
        misses = [p for p in MOVES if not corrects(with_moves, *p)]
        merges = [p for p in NOT_MOVES if corrects(with_moves, *p)]
        rows.append((f"correction by a move, {name}", len(MOVES), misses, len(NOT_MOVES), merges))
    print(f"{'rule':32} {'misses':>12} {'false merges':>14}")
    for label, n_should, misses, n_not, merges in rows:
        print(f"{label:32} {len(misses):>5} of {n_should:<4} {len(merges):>6} of {n_not:<4}")
        if show:
            for a, b in misses:
                print(f"    missed: {a!r} / {b!r}")
            for a, b in merges:
                print(f"    false:  {a!r} / {b!r}")


if __name__ == "__main__":
    main()
