-- The `threads` table of Codex 0.171.0's state database (`state_5.sqlite`), the columns the
-- writer fills in: the tests create it as Codex would, to see a new session registered.
CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, source TEXT NOT NULL,
  model_provider TEXT NOT NULL, cwd TEXT NOT NULL, title TEXT NOT NULL,
  sandbox_policy TEXT NOT NULL, approval_mode TEXT NOT NULL,
  has_user_event INTEGER NOT NULL DEFAULT 0, cli_version TEXT NOT NULL DEFAULT '',
  first_user_message TEXT NOT NULL DEFAULT '', preview TEXT NOT NULL DEFAULT '',
  model TEXT, created_at_ms INTEGER, updated_at_ms INTEGER, thread_source TEXT,
  history_mode TEXT NOT NULL DEFAULT 'legacy', originator TEXT,
  recency_at INTEGER NOT NULL DEFAULT 0, recency_at_ms INTEGER NOT NULL DEFAULT 0);
