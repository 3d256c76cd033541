"""The store contract: every test here runs against each store (SQLite always, PostgreSQL
with ``pytest --postgres``) through the protocol of :mod:`recalld.store.base` only.

Adding to the protocol (a method, a column) means: the protocol module, both
implementations (``store/sqlite*.py`` and ``store/postgres*.py``), and a test
here that every store must pass. A new SQLite migration gets the same number in
``store/postgres_migrations.py``.
"""
