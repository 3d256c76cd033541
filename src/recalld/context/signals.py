"""Sensory signals reduced to features: images, audio and biometric readings.

Raw media never leave this module: an image becomes a 64-bit perceptual hash
(imagehash's pHash) and a 64-bin colour histogram; audio becomes a Chromaprint
fingerprint (decoded with soundfile, fingerprinted by pyacoustid's binding to
libchromaprint, which avoids bookworm's broken ``fpcalc`` exit status); a
biometric reading is a named number. Only these features are stored. Media are
never decoded whole when they would be huge: an image over :data:`IMAGE_MAX_PIXELS`
is refused from its header, and only the first :data:`AUDIO_MAX_SECONDS` of a
recording are decoded and fingerprinted.

Similarities, each in [0, 1]:
- image: ``0.75·(1 - hamming/32)⁺ + 0.25·histogram intersection`` (unrelated
  images sit near 32 differing bits of 64, so they score ~0 on the hash part);
- audio: ``(1 - BER/0.3)⁺`` at the best alignment, where BER is the bit error
  rate between fingerprints (same clip with noise ≈ 0.005, a different clip
  ≈ 0.4); a clip that is a part of the stored one aligns and matches;
- biometric: mean over the readings both share of ``exp(-½(Δ/scale)²)``, with
  a per-reading scale (heart_rate 12 bpm, skin_conductance 1.5 µS,
  temperature 0.4 °C, …; 10 % of the stored value for unknown names).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from recalld._validate import name_text
from recalld.errors import RecalldError, ValidationError

__all__ = [
    "AudioFeatures",
    "ImageEncoder",
    "ImageFeatures",
    "audio_features",
    "audio_similarities",
    "audio_similarity",
    "biometric_similarity",
    "checked_features",
    "image_features",
    "image_similarities",
    "image_similarity",
    "load_image_encoder",
    "load_media",
]

MAX_MEDIA_BYTES = 25 * 1024 * 1024
# A reading beyond this is no measurement (and its square would overflow the similarity).
MAX_BIOMETRIC_MAGNITUDE = 1e6
# Readings one cue (or one experience) may carry.
MAX_READINGS = 32
# Library messages may quote Python objects ("<_io.BytesIO object at 0x7f…>").
_OBJECT_REPR = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")
BIOMETRIC_SCALES = {
    "heart_rate": 12.0,
    "heart_rate_variability": 15.0,
    "skin_conductance": 1.5,
    "temperature": 0.4,
    "skin_temperature": 0.8,
    "respiration_rate": 3.0,
    "blood_oxygen": 2.0,
    "steps": 500.0,
}
HISTOGRAM_BINS = 64
# Pillow's own decompression-bomb threshold (beyond it Pillow only warns, up to twice it):
# about 9,500 x 9,500 pixels, above any camera's photo but a 200-megapixel mode's.
IMAGE_MAX_PIXELS = 89_478_485
# How Pillow's DecompressionBombError counts an image: "Image size (196000000 pixels) …".
_BOMB_PIXELS = re.compile(r"\((\d+) pixels\)")
HEADER_BYTES = 8 + 4 * HISTOGRAM_BINS
AUDIO_BER_CEILING = 0.3
AUDIO_MAX_OFFSET = 120
AUDIO_MIN_OVERLAP = 20
AUDIO_MIN_SHARED = 2
# Only the start of a recording is fingerprinted, as Chromaprint's own fpcalc does (its
# default length, 120 s): alignment reaches ~15 s either way, so a later part adds no match,
# and decoding stops there however long the (compressed) recording claims to be.
AUDIO_MAX_SECONDS = 120
# Samples (of every channel) decoded at once: 2 MB, whatever the channel count (Vorbis
# allows 255).
AUDIO_BLOCK_SAMPLES = 1 << 20
# The highest rate recordings are made at (DXD, 352.8 kHz); FLAC allows 655,350 Hz. At
# most 92 MB of mono samples for the seconds fingerprinted.
AUDIO_MAX_RATE = 384_000


class ImageEncoder(Protocol):
    """A user-supplied image model: turns a picture into a unit-length embedding.

    No PyPI package ships CLIP-style weights, so images are compared by
    perceptual hash and colour by default; a model plugs in through the
    ``RECALLD_IMAGE_ENCODER`` setting (``module:factory``, the factory taking no
    arguments and returning an encoder). Its embeddings are kept beside the hash.
    """

    def __call__(self, image: Any) -> np.ndarray:
        """The embedding of a PIL RGB image (float32, L2-normalised)."""
        ...


def load_image_encoder(spec: str) -> ImageEncoder:
    """Import ``module:factory`` and call the factory (a clear error when it fails)."""
    module_name, _, factory_name = spec.partition(":")
    if not module_name or not factory_name:
        raise ValidationError("image_encoder", f"expected 'module:factory', got {spec!r}")
    try:
        factory = getattr(importlib.import_module(module_name), factory_name)
    except (ImportError, AttributeError) as error:
        raise ValidationError("image_encoder", f"cannot load {spec!r}: {error}") from None
    encoder: ImageEncoder = factory()
    return encoder


@dataclass(frozen=True)
class ImageFeatures:
    """What is kept of an image (the embedding only when an image model is configured)."""

    phash: int
    histogram: tuple[float, ...]
    embedding: tuple[float, ...] = ()

    def to_bytes(self) -> bytes:
        """8 bytes of hash, 64 float32 histogram bins, then the float32 embedding, if any."""
        hash_part = self.phash.to_bytes(8, "big")
        histogram = np.asarray(self.histogram, dtype=np.float32).tobytes()
        return hash_part + histogram + np.asarray(self.embedding, dtype=np.float32).tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> ImageFeatures:
        """Inverse of :meth:`to_bytes`."""
        histogram = np.frombuffer(data[8:HEADER_BYTES], dtype=np.float32)
        embedding = np.frombuffer(data[HEADER_BYTES:], dtype=np.float32)
        return cls(
            phash=int.from_bytes(data[:8], "big"),
            histogram=tuple(float(value) for value in histogram),
            embedding=tuple(float(value) for value in embedding),
        )


@dataclass(frozen=True)
class AudioFeatures:
    """What is kept of a sound: its Chromaprint fingerprint (32-bit sub-fingerprints)."""

    fingerprint: np.ndarray

    def to_bytes(self) -> bytes:
        """The fingerprint as little-endian uint32s."""
        return np.asarray(self.fingerprint, dtype="<u4").tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> AudioFeatures:
        """Inverse of :meth:`to_bytes`."""
        return cls(fingerprint=np.frombuffer(data, dtype="<u4").astype(np.uint32))


def load_media(value: str, field: str, *, allow_paths: bool = True) -> bytes:
    """Bytes from a local file path or a base64 string (paths win when the file exists).

    ``allow_paths=False`` (requests from other machines) accepts base64 only, so
    a remote caller cannot make this process read its own files.
    """
    text = value.strip()
    if not allow_paths:
        # Never touch the file system for a remote caller, not even to see whether a
        # path exists: the answer must not depend on this machine's files.
        return _base64_media(text, field, "must be base64 data (this server reads no local files)")
    if not text:
        raise ValidationError(field, "must be a local file path or base64 data")
    if len(text) < 4096:
        candidate = Path(text).expanduser()
        try:
            if candidate.is_file():
                size = candidate.stat().st_size
                if size > MAX_MEDIA_BYTES:
                    raise ValidationError(field, f"file is {size} bytes; limit {MAX_MEDIA_BYTES}")
                return candidate.read_bytes()
        except OSError:
            pass
    return _base64_media(text, field, "is neither an existing local file nor valid base64 data")


def _base64_media(text: str, field: str, invalid: str) -> bytes:
    if len(text) > MAX_MEDIA_BYTES * 4 // 3 + 4:
        raise ValidationError(field, f"is over the {MAX_MEDIA_BYTES}-byte limit once decoded")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(field, invalid) from None
    if not data:
        raise ValidationError(field, invalid if not text else "decoded to no data")
    if len(data) > MAX_MEDIA_BYTES:
        raise ValidationError(field, f"is {len(data)} bytes; limit {MAX_MEDIA_BYTES}")
    return data


def _library_message(error: BaseException) -> str:
    """A third-party library's message, without the Python objects it may quote."""
    return _OBJECT_REPR.sub("the data", str(error)).strip() or type(error).__name__


def image_features(data: bytes, encoder: ImageEncoder | None = None) -> ImageFeatures:
    """Perceptual hash and colour histogram of an image (PNG, JPEG, …), and its
    embedding when an image model (``encoder``) is configured."""
    import imagehash
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as opened:
            # The size is in the header: a picture too big to decode is refused before its
            # pixels are (a 20 KB PNG can stand for 169 million of them, 1.2 GB once read).
            width, height = opened.size
            image = None if width * height > IMAGE_MAX_PIXELS else opened.convert("RGB")
    except Image.DecompressionBombError as error:
        # Pillow refuses twice its threshold itself, before the size can be read here: the
        # same limit is named, not Pillow's (the pixels it counted are in its message).
        counted = _BOMB_PIXELS.search(str(error))
        size = f"{int(counted[1]):,} pixels" if counted else f"over {2 * IMAGE_MAX_PIXELS:,} pixels"
        raise ValidationError(
            "image", f"is {size}; the limit is {IMAGE_MAX_PIXELS:,} pixels"
        ) from None
    except UnidentifiedImageError:
        # Pillow's message quotes the stream it was given ("cannot identify image file
        # <_io.BytesIO object at 0x...>"), which read "... image file the data" once the
        # object was taken out (adversarial pass a65): say what it means instead.
        raise ValidationError(
            "image",
            "is not an image Pillow can read: its bytes are in no image format it knows"
            " (PNG, JPEG, GIF, BMP, TIFF, WebP ...)",
        ) from None
    except (
        OSError,
        ValueError,
        SyntaxError,  # raised by some truncated image headers
    ) as error:
        raise ValidationError(
            "image", f"is not an image Pillow can read: {_library_message(error)}"
        ) from None
    if image is None:
        raise ValidationError(
            "image",
            f"is {width} x {height} pixels ({width * height:,}); the limit is"
            f" {IMAGE_MAX_PIXELS:,} pixels",
        )
    phash = int(str(imagehash.phash(image)), 16)
    pixels = np.asarray(image.resize((64, 64)), dtype=np.uint16) // 64  # 4 levels per channel
    bins = pixels[..., 0] * 16 + pixels[..., 1] * 4 + pixels[..., 2]
    counts = np.bincount(bins.ravel(), minlength=HISTOGRAM_BINS).astype(np.float64)
    embedding: tuple[float, ...] = ()
    if encoder is not None:
        vector = np.asarray(encoder(image), dtype=np.float32).ravel()
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            embedding = tuple(float(value) for value in vector / norm)
    return ImageFeatures(
        phash=phash,
        histogram=tuple(float(value) for value in counts / counts.sum()),
        embedding=embedding,
    )


def checked_features(channel: str, data: bytes, field: str) -> bytes:
    """Serialised features of ``channel`` as :meth:`ImageFeatures.to_bytes` or
    :meth:`AudioFeatures.to_bytes` write them (an import's), refused naming ``field``
    otherwise: a NaN bin would make every image cue score the memory 0 (and answer its
    channel as null), a bin above 1 lift the colour part over any cue's."""
    size = len(data) - HEADER_BYTES if channel == "image" else len(data)
    if size < 0 or size % 4:
        raise ValidationError(field, f"{len(data)} bytes are not {channel} features")
    if channel == "image":
        values = np.frombuffer(data[8:], dtype=np.float32)
        if not np.isfinite(values).all():
            raise ValidationError(field, "holds a value that is not a finite number")
        histogram = values[:HISTOGRAM_BINS]
        if (histogram < 0).any() or (histogram > 1).any():
            raise ValidationError(field, "colour histogram bins must be between 0 and 1")
    return data


def image_similarities(cue: ImageFeatures, stored: Sequence[bytes]) -> np.ndarray:
    """:func:`image_similarity` of ``cue`` against many serialised features at once."""
    if not stored:
        return np.zeros(0)
    hashes = np.array([int.from_bytes(data[:8], "big") for data in stored], dtype=np.uint64)
    histograms = np.frombuffer(b"".join(data[8:HEADER_BYTES] for data in stored), dtype=np.float32)
    histograms = histograms.reshape(len(stored), HISTOGRAM_BINS)
    differing = np.bitwise_count(hashes ^ np.uint64(cue.phash)).astype(np.float64)
    hash_part = np.maximum(0.0, 1.0 - differing / 32)
    colour = np.minimum(histograms, np.asarray(cue.histogram, dtype=np.float32)).sum(axis=1)
    # A colour part of NaN counts 0, and the whole is held to [0, 1]: features imported
    # before they were checked (checked_features) may hold anything.
    colour = np.nan_to_num(colour, nan=0.0)
    similarity: np.ndarray = np.clip(0.75 * hash_part + 0.25 * colour, 0.0, 1.0)
    if cue.embedding:
        # With an image model, its cosine counts when it says more than hash and colour.
        query = np.asarray(cue.embedding, dtype=np.float32)
        for index, data in enumerate(stored):
            vector = np.frombuffer(data[HEADER_BYTES:], dtype=np.float32)
            if vector.shape == query.shape:
                cosine = float(np.nan_to_num(np.clip(vector @ query, 0.0, 1.0), nan=0.0))
                similarity[index] = max(similarity[index], cosine)
    return similarity


def image_similarity(cue: ImageFeatures, memory: ImageFeatures) -> float:
    """Hash closeness (mostly) and colour overlap (a little)."""
    return float(image_similarities(cue, [memory.to_bytes()])[0])


def audio_features(data: bytes) -> AudioFeatures:
    """Decode audio (WAV, FLAC, OGG, MP3 …) and fingerprint its first
    :data:`AUDIO_MAX_SECONDS` with Chromaprint."""
    import soundfile

    try:
        import chromaprint
    except ImportError as error:  # the Python binding loads libchromaprint at import
        raise RecalldError(
            f"audio fingerprints need the Chromaprint library ({error}); on Debian or Ubuntu: "
            "apt-get install libchromaprint1"
        ) from error
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as sound:
            rate = int(sound.samplerate)
            mono = _first_seconds(sound, rate) if rate <= AUDIO_MAX_RATE else None
    except (soundfile.LibsndfileError, RuntimeError, TypeError, ValueError) as error:
        raise ValidationError(
            "audio", f"is not audio libsndfile can decode: {_library_message(error)}"
        ) from None
    if mono is None:
        raise ValidationError(
            "audio", f"has a sample rate of {rate} Hz; the limit is {AUDIO_MAX_RATE} Hz"
        )
    if len(mono) < rate * 2:
        raise ValidationError("audio", "needs at least 2 seconds of sound to fingerprint")
    try:
        fingerprinter = chromaprint.Fingerprinter()
        fingerprinter.start(int(rate), 1)
        fingerprinter.feed(mono.tobytes())
        encoded = fingerprinter.finish()
    except chromaprint.FingerprintError as error:
        raise ValidationError(
            "audio", f"could not be fingerprinted: {_library_message(error)}"
        ) from None
    values, _ = chromaprint.decode_fingerprint(encoded)
    if not values:
        raise ValidationError("audio", "produced no fingerprint (silence?)")
    return AudioFeatures(fingerprint=np.asarray(values, dtype=np.int64).astype(np.uint32))


def _first_seconds(sound: Any, rate: int) -> np.ndarray:
    """The first :data:`AUDIO_MAX_SECONDS` of ``sound`` as mono int16, decoded a block at a
    time: a few hundred kilobytes of compressed silence can stand for hours of samples, so
    neither the whole recording nor all its channels are ever held at once."""
    wanted = rate * AUDIO_MAX_SECONDS
    frames = max(1, AUDIO_BLOCK_SAMPLES // max(1, int(sound.channels)))
    parts: list[np.ndarray] = []
    taken = 0
    while taken < wanted:
        block = sound.read(min(frames, wanted - taken), dtype="int16", always_2d=True)
        if not len(block):
            break
        parts.append(block.mean(axis=1).astype(np.int16))
        taken += len(block)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)


def audio_similarity(cue: AudioFeatures, memory: AudioFeatures) -> float:
    """1 minus the scaled bit error rate at the best alignment of the two fingerprints."""
    return float(audio_similarities(cue, [memory.to_bytes()])[0])


# Fingerprints aligned at once (bounds the temporary arrays: ~75 KB per fingerprint of
# 75 sub-fingerprints).
AUDIO_BATCH = 32


def audio_similarities(cue: AudioFeatures, stored: Sequence[bytes]) -> np.ndarray:
    """:func:`audio_similarity` of ``cue`` against many serialised fingerprints at once.

    Matching audio shares many exact 32-bit sub-fingerprints (as AcoustID's index
    relies on): the distinct values each fingerprint shares with the cue are counted
    for all of them in one pass, and only those sharing at least
    :data:`AUDIO_MIN_SHARED` are aligned, those of one length together.
    """
    similarity = np.zeros(len(stored))
    if not stored:
        return similarity
    lengths = np.array([len(data) // 4 for data in stored], dtype=np.int64)
    values = np.frombuffer(b"".join(stored), dtype="<u4").astype(np.uint32)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    first = np.asarray(cue.fingerprint, dtype=np.uint32)
    owners = np.repeat(np.arange(len(stored), dtype=np.uint64), lengths)
    shared = np.isin(values, first)
    pairs = np.unique((owners[shared] << np.uint64(32)) | values[shared].astype(np.uint64))
    counts = np.bincount((pairs >> np.uint64(32)).astype(np.int64), minlength=len(stored))
    candidates = np.flatnonzero(counts >= AUDIO_MIN_SHARED)
    for other in np.unique(lengths[candidates]):
        group = candidates[lengths[candidates] == other]
        for part in range(0, len(group), AUDIO_BATCH):
            chosen = group[part : part + AUDIO_BATCH]
            seconds = values[starts[chosen][:, None] + np.arange(other)[None, :]]
            similarity[chosen] = _aligned(first, seconds)
    return similarity


def _aligned(first: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """1 minus the scaled bit error rate of ``first`` against each row of ``seconds``
    (fingerprints of one length) at each one's best alignment."""
    length, other = len(first), seconds.shape[1]
    min_overlap = min(AUDIO_MIN_OVERLAP, length, other)
    offsets = np.arange(
        max(-AUDIO_MAX_OFFSET, -(other - min_overlap)),
        min(AUDIO_MAX_OFFSET, length - min_overlap) + 1,
    )
    # For each offset o, first[i] is compared with second[i - o] where both exist.
    partner = np.arange(length)[None, :] - offsets[:, None]
    valid = (partner >= 0) & (partner < other)
    overlap = valid.sum(axis=1)
    usable = overlap >= min_overlap
    if not usable.any():
        return np.zeros(len(seconds))
    aligned = seconds[:, np.clip(partner[usable], 0, other - 1)]
    bits = (np.bitwise_count(first[None, None, :] ^ aligned) * valid[usable][None]).sum(
        axis=2, dtype=np.int64
    )
    error_rate = bits / (32.0 * overlap[usable][None, :])
    best: np.ndarray = np.maximum(0.0, 1.0 - error_rate.min(axis=1) / AUDIO_BER_CEILING)
    return best


def check_biometrics(readings: dict[str, float]) -> dict[str, float]:
    """Named finite numbers, at most :data:`MAX_READINGS` of them; each name visible
    characters without spaces at its ends (as a tag)."""
    if len(readings) > MAX_READINGS:
        raise ValidationError(
            "biometrics", f"{len(readings)} readings; the limit is {MAX_READINGS}"
        )
    checked: dict[str, float] = {}
    for name, value in readings.items():
        if not isinstance(name, str) or not name or len(name) > 64:
            raise ValidationError("biometrics", f"reading name {name!r} must be 1-64 chars")
        # A name is compared as an identifier: " heart_rate " or a zero-width character
        # would make a reading no cue of "heart_rate" ever meets.
        name_text(name, "biometrics")
        if name != name.strip():
            raise ValidationError(
                "biometrics", f"reading name {name!r} must not start or end with a space"
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ValidationError("biometrics", f"{name} must be a finite number, got {value!r}")
        if abs(value) > MAX_BIOMETRIC_MAGNITUDE:
            raise ValidationError(
                "biometrics",
                f"{name} is {value!r}; a reading must be between -{MAX_BIOMETRIC_MAGNITUDE:g}"
                f" and {MAX_BIOMETRIC_MAGNITUDE:g}",
            )
        checked[name] = float(value)
    return checked


def biometric_similarity(cue: dict[str, float], memory: dict[str, float]) -> float | None:
    """Mean per-reading similarity over the names both share; None when they share none."""
    shared = sorted(set(cue) & set(memory))
    if not shared:
        return None
    parts = []
    for name in shared:
        scale = BIOMETRIC_SCALES.get(name) or max(abs(memory[name]) * 0.1, 1e-6)
        parts.append(math.exp(-0.5 * ((cue[name] - memory[name]) / scale) ** 2))
    return sum(parts) / len(parts)
