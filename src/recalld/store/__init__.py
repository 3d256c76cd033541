"""Storage backends behind the :class:`~recalld.store.base.Store` protocol."""
