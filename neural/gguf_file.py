"""GGUFFile: one fast pass over a GGUF header (metadata + tensor table); tensor bytes stay memory-mapped.

gguf-py's GGUFReader builds a numpy memmap view per value, ~25 s for a 150k-token vocabulary on a loaded
2-core machine (#18); struct over one mmap reads the same header in well under a second. The tensors expose
the attributes the loader and neural.quant read from GGUFReader's (``name``, ``tensor_type``, ``shape``,
``data``), so either reader can be handed to them.
"""
from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any

import numpy as np

from neural.errors import ModelLoadError

_MAGIC = b"GGUF"
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_NUMPY = {0: np.uint8, 1: np.int8, 2: np.uint16, 3: np.int16, 4: np.uint32, 5: np.int32, 6: np.float32,
          7: np.bool_, 10: np.uint64, 11: np.int64, 12: np.float64}
_STRING, _ARRAY = 8, 9
# plain-value tensor types: ggml type id -> numpy dtype of one element (everything else is a block format)
_PLAIN = {0: np.float32, 1: np.float16, 24: np.int8, 25: np.int16, 26: np.int32, 27: np.int64, 28: np.float64}


class _Truncated(Exception):
    pass


@dataclass
class GGUFTensor:
    name: str
    tensor_type: Any  # gguf.GGMLQuantizationType
    shape: tuple[int, ...]  # ggml order: fastest-varying dimension first (as GGUFReader's)
    offset: int  # absolute, in the file
    nbytes: int
    _buf: Any = None

    @property
    def data(self) -> np.ndarray:
        """Plain types as values ``[rows..., cols]``; block formats as ``uint8 [rows..., bytes_per_row]``."""
        dims = tuple(reversed(self.shape))
        plain = _PLAIN.get(int(self.tensor_type))
        if plain is not None:
            return np.frombuffer(self._buf, dtype=plain, count=prod(dims), offset=self.offset).reshape(dims)
        arr = np.frombuffer(self._buf, dtype=np.uint8, count=self.nbytes, offset=self.offset)
        return arr.reshape(*dims[:-1], -1)


class GGUFFile:
    """``fields``: metadata key -> value (str, int, float, bool, or list of those); ``tensors`` in file order."""

    def __init__(self, path: str | Path) -> None:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:  # ValueError: an empty file cannot be mapped
            raise ModelLoadError(f"corrupt or unreadable GGUF file {self.path}: {exc}") from exc
        self._pos = 0
        try:
            if self._take(4) != _MAGIC:
                raise ModelLoadError(f"corrupt or unreadable GGUF file {self.path}: no GGUF magic")
            version = self._scalar("<I")
            if version not in (2, 3):
                raise ModelLoadError(f"GGUF {self.path}: version {version} is not supported (2 and 3 are)")
            n_tensors, n_kv = self._scalar("<Q"), self._scalar("<Q")
            if n_tensors > 1 << 20 or n_kv > 1 << 20:
                raise ModelLoadError(f"corrupt GGUF file {self.path}: {n_tensors} tensors, {n_kv} keys")
            self.fields: dict[str, Any] = {}
            for _ in range(n_kv):
                key = self._string()
                self.fields[key] = self._value(self._scalar("<I"))
            table = [self._tensor_info() for _ in range(n_tensors)]
        except _Truncated:
            raise ModelLoadError(f"corrupt GGUF file {self.path}: the header is truncated") from None
        except (UnicodeDecodeError, KeyError, struct.error) as exc:
            raise ModelLoadError(f"corrupt GGUF file {self.path}: {type(exc).__name__}: {exc}") from exc
        align = int(self.fields.get("general.alignment", 32))
        data_start = -(-self._pos // align) * align
        self.tensors: list[GGUFTensor] = []
        for name, shape, type_id, rel in table:
            try:
                qtype = GGMLQuantizationType(type_id)
                block, size = GGML_QUANT_SIZES[qtype]
            except (ValueError, KeyError):
                raise ModelLoadError(f"GGUF {self.path}: tensor {name} has unknown type id {type_id}") from None
            if shape[0] % block:
                raise ModelLoadError(f"corrupt GGUF file {self.path}: tensor {name} row of {shape[0]} is not "
                                     f"whole {qtype.name} blocks of {block}")
            nbytes = prod(shape) // block * size
            start = data_start + rel
            if start + nbytes > len(self._mm):
                raise ModelLoadError(f"corrupt GGUF file {self.path}: tensor {name} ends at byte {start + nbytes}, "
                                     f"past the end of the file ({len(self._mm)} bytes): truncated?")
            self.tensors.append(GGUFTensor(name, qtype, shape, start, nbytes, self._mm))

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    # ------------------------------------------------------------------ header primitives
    def _take(self, n: int) -> bytes:
        end = self._pos + n
        if end > len(self._mm):
            raise _Truncated
        out = self._mm[self._pos : end]
        self._pos = end
        return out

    def _scalar(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        if self._pos + size > len(self._mm):
            raise _Truncated
        (v,) = struct.unpack_from(fmt, self._mm, self._pos)
        self._pos += size
        return v

    def _string(self) -> str:
        n = self._scalar("<Q")
        return self._take(n).decode("utf-8")

    def _value(self, vtype: int) -> Any:
        if vtype == _STRING:
            return self._string()
        if vtype == _ARRAY:
            item, count = self._scalar("<I"), self._scalar("<Q")
            if item == _STRING:  # a vocabulary: the loop below is the hot one (~150k strings)
                mm, pos, out = self._mm, self._pos, []
                end_of_file = len(mm)
                for _ in range(count):
                    (n,) = struct.unpack_from("<Q", mm, pos)
                    if pos + 8 + n > end_of_file:
                        raise _Truncated
                    out.append(mm[pos + 8 : pos + 8 + n].decode("utf-8"))
                    pos += 8 + n
                self._pos = pos
                return out
            if item in _NUMPY:
                dtype = np.dtype(_NUMPY[item])
                raw = self._take(count * dtype.itemsize)
                return np.frombuffer(raw, dtype=dtype).tolist()
            return [self._value(item) for _ in range(count)]  # arrays of arrays
        fmt = _SCALAR.get(vtype)
        if fmt is None:
            raise ModelLoadError(f"corrupt GGUF file {self.path}: unknown metadata value type {vtype}")
        return self._scalar(fmt)

    def _tensor_info(self) -> tuple[str, tuple[int, ...], int, int]:
        name = self._string()
        n_dims = self._scalar("<I")
        if n_dims > 8:
            raise ModelLoadError(f"corrupt GGUF file {self.path}: tensor {name} has {n_dims} dimensions")
        shape = tuple(self._scalar("<Q") for _ in range(n_dims))
        return name, shape, self._scalar("<I"), self._scalar("<Q")


def open_gguf(path: Path) -> GGUFFile:
    """The file's header, parsed once (ModelLoadError on a truncated or garbage file)."""
    return GGUFFile(path)


def gguf_field(reader, key: str, default=None):
    """A metadata value from a GGUFFile (plain dict) or a gguf.GGUFReader (field objects)."""
    f = reader.fields.get(key)
    if f is None:
        return default
    return f.contents() if hasattr(f, "contents") else f
