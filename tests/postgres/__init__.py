"""Scale-out and fault tests of the PostgreSQL store (pytest --postgres)."""
