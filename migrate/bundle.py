"""A reader for TensorFlow checkpoints (the V2 "tensor bundle" format) that needs no
TensorFlow: numpy only.

Importing TensorFlow costs ~580 MB of RSS and seconds; ``tf-migrate ckpt ls`` and
``compare`` read checkpoints with this instead, one tensor at a time.

Format: ``PREFIX.index`` is a LevelDB-style SSTable whose keys are variable names and
whose values are ``BundleEntryProto`` messages (dtype, shape, shard, offset, size);
the empty key holds the ``BundleHeaderProto`` (number of shards, endianness).
``PREFIX.data-SSSSS-of-NNNNN`` hold the raw tensor bytes. Anything this reader does
not handle (compressed index blocks, partitioned-variable slices, exotic dtypes)
raises ``Unsupported`` and callers fall back to TensorFlow's reader.
"""
from __future__ import annotations

import os
import struct
from typing import Dict, Iterator, Tuple

MAGIC = 0xDB4775248B80FB57
FOOTER = 48

# tensorflow/core/framework/types.proto
DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
          8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16", 18: "complex128",
          19: "float16", 22: "uint32", 23: "uint64"}


class BundleError(Exception):
    """A missing, corrupt or truncated checkpoint."""


class Unsupported(Exception):
    """A valid checkpoint using a feature this reader leaves to TensorFlow."""


def _varint(data: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise BundleError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise BundleError("bad varint")


def _fields(data: bytes) -> Iterator[Tuple[int, int, object]]:
    """(field number, wire type, value) of a protobuf message."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise BundleError(f"unknown protobuf wire type {wire}")
        if pos > len(data):
            raise BundleError("truncated protobuf message")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _shape(data: bytes) -> Tuple[int, ...]:
    dims = []
    for number, _, value in _fields(data):
        if number == 2:
            size = 0
            for n, _, v in _fields(value):
                if n == 1:
                    size = _signed(v)
            dims.append(size)
        elif number == 3 and value:
            raise Unsupported("unknown rank")
    return tuple(dims)


class _Table:
    """Just enough of LevelDB's table format to list every key and value."""

    def __init__(self, data: bytes) -> None:
        if len(data) < FOOTER:
            raise BundleError("index file too short")
        footer = data[-FOOTER:]
        if struct.unpack("<Q", footer[-8:])[0] != MAGIC:
            raise BundleError("not a checkpoint index (bad magic number)")
        self.data = data
        pos = 0
        _, pos = _varint(footer, pos)  # metaindex offset
        _, pos = _varint(footer, pos)  # metaindex size
        self.index_offset, pos = _varint(footer, pos)
        self.index_size, pos = _varint(footer, pos)

    def _block(self, offset: int, size: int) -> bytes:
        if offset + size + 5 > len(self.data) - FOOTER:
            raise BundleError("index block out of range (truncated index)")
        kind = self.data[offset + size]
        if kind != 0:
            raise Unsupported(f"compressed index block (type {kind})")
        return self.data[offset:offset + size]

    @staticmethod
    def _entries(block: bytes) -> Iterator[Tuple[bytes, bytes]]:
        if len(block) < 4:
            raise BundleError("index block too short")
        restarts = struct.unpack("<I", block[-4:])[0]
        limit = len(block) - 4 - 4 * restarts
        if limit < 0:
            raise BundleError("bad index block")
        pos, key = 0, b""
        while pos < limit:
            shared, pos = _varint(block, pos)
            unshared, pos = _varint(block, pos)
            length, pos = _varint(block, pos)
            key = key[:shared] + block[pos:pos + unshared]
            pos += unshared
            value = block[pos:pos + length]
            pos += length
            if pos > limit:
                raise BundleError("truncated index entry")
            yield key, value

    def items(self) -> Iterator[Tuple[bytes, bytes]]:
        for _, handle in self._entries(self._block(self.index_offset, self.index_size)):
            offset, pos = _varint(handle, 0)
            size, _ = _varint(handle, pos)
            yield from self._entries(self._block(offset, size))


class Bundle:
    """``Bundle(prefix)``: ``.entries`` maps names to (shape, dtype); ``.read(name)`` one tensor."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        try:
            with open(prefix + ".index", "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise BundleError(f"cannot open {prefix}.index: {exc.strerror}") from None
        self.num_shards = 1
        self._raw: Dict[str, Tuple[int, Tuple[int, ...], int, int, int]] = {}
        for key, value in _Table(data).items():
            if key == b"":
                for number, _, v in _fields(value):
                    if number == 1:
                        self.num_shards = v
                    elif number == 2 and v != 0:
                        raise Unsupported("big-endian checkpoint")
                continue
            dtype, shape, shard, offset, size = 0, (), 0, 0, 0
            for number, _, v in _fields(value):
                if number == 1:
                    dtype = v
                elif number == 2:
                    shape = _shape(v)
                elif number == 3:
                    shard = v
                elif number == 4:
                    offset = v
                elif number == 5:
                    size = v
                elif number == 7:
                    raise Unsupported("partitioned variable slices")
            if dtype not in DTYPES:
                raise Unsupported(f"dtype enum {dtype}")
            self._raw[key.decode("utf-8")] = (dtype, shape, shard, offset, size)
        self.entries = {name: (shape, DTYPES[dtype]) for name, (dtype, shape, *_rest) in self._raw.items()}

    def _shard(self, shard: int) -> str:
        return f"{self.prefix}.data-{shard:05d}-of-{self.num_shards:05d}"

    def numpy_dtype(self, name: str):
        import numpy as np

        kind = DTYPES[self._raw[name][0]]
        if kind == "string":
            return np.dtype(np.uint8)
        if kind == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(kind)

    def locate(self, name: str) -> Tuple[str, int, int]:
        """(data file, offset, size in bytes) of a tensor."""
        _, _, shard, offset, size = self._raw[name]
        return self._shard(shard), offset, size

    def chunks(self, name: str, buffer: bytearray) -> Iterator[bytearray]:
        """The tensor's raw bytes, ``len(buffer)`` at a time, read into ``buffer`` itself
        (no allocation per chunk: use each chunk before asking for the next). The last,
        shorter chunk comes in a bytearray of its own. ``len(buffer)`` must be a
        multiple of every itemsize."""
        _, _, shard, offset, total = self._raw[name]
        path = self._shard(shard)
        try:
            with open(path, "rb", buffering=0) as handle:
                handle.seek(offset)
                left = total
                while left:
                    chunk = buffer if left >= len(buffer) else bytearray(left)
                    view, got = memoryview(chunk), 0
                    while got < len(chunk):
                        n = handle.readinto(view[got:])
                        if not n:
                            raise BundleError(f"{name}: the data file {os.path.basename(path)} is "
                                              f"truncated ({total - left + got} of {total} bytes)")
                        got += n
                    left -= len(chunk)
                    yield chunk
        except OSError as exc:
            raise BundleError(f"cannot read {path}: {exc.strerror}") from None

    def read(self, name: str):
        import numpy as np

        dtype, shape, shard, offset, size = self._raw[name]
        path = self._shard(shard)
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                buffer = handle.read(size)  # no zero-filled bytearray first
        except OSError as exc:
            raise BundleError(f"cannot read {path}: {exc.strerror}") from None
        got = len(buffer)
        if got != size:
            raise BundleError(f"{name}: the data file {os.path.basename(path)} is truncated "
                              f"({got} of {size} bytes)")
        kind = DTYPES[dtype]
        if kind == "string":
            return np.frombuffer(buffer, dtype=np.uint8)  # compared as raw bytes
        if kind == "bfloat16":
            import ml_dtypes

            np_dtype = ml_dtypes.bfloat16
        else:
            np_dtype = np.dtype(kind)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if count * np.dtype(np_dtype).itemsize != size:
            raise BundleError(f"{name}: {size} bytes do not hold a {kind} tensor of shape {shape}")
        return np.frombuffer(buffer, dtype=np_dtype).reshape(shape)
