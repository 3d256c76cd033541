"""The knowledge graph: entity and relation extraction, and graph queries (DESIGN.md §2).

- :mod:`recalld.graph.types` — value types shared with the store;
- :mod:`recalld.graph.names` — entity keys and input validation;
- :mod:`recalld.graph.extractor` — the ``Extractor`` protocol and the factory;
- :mod:`recalld.graph.rules` — the rule-based extractor (no model);
- :mod:`recalld.graph.spacy_extractor` — the default, on spaCy's small English pipeline;
- :mod:`recalld.graph.query` — the graph candidates and features of recall.

Importing this package loads no model: spaCy is imported on the first extraction.
"""
