"""What the tests and the benchmarks share (both import it; bench never imports tests).

- `server`: `Service` (the real `ledger-service serve` in a subprocess on a free loopback
  port), `free_port`, `http`, `cli`, `child_pids`.
- `inprocess`: `InProcessServer`, WSGI apps under waitress in a thread of this process.
- `databases`: `throwaway`, a new SQLite file or PostgreSQL database, dropped afterwards.
- `fuzzing`: the schemathesis run from the published description (strategies, checks,
  the leak check, the seeded ledger), used by tests/system/test_fuzz.py
  and bench/fuzz.py.
- `browser`: Chromium's flags, `SIZES` and a virtual passkey (`add_authenticator`,
  `first_sign_in`), used by tests/web/web_support.py and bench/pages.py.
- `serve_trials`: `Trials`, `serve` stopped by a signal at one moment of its start-up and
  judged, used by tests/web/test_web_serve.py and bench/serve_signals.py.
- `statement_files`: generated bank files (mutated real ones and grammar-written ones)
  for the statement readers' fuzzing, used by tests/services/banking/test_readers_fuzz.py
  and bench/statements_fuzz.py.
"""
