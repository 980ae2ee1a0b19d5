"""Text rules with no store behind them: token estimates, recognition triggers, claim matching,
secrets and quarantine."""
