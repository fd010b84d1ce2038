"""A reader for TensorFlow checkpoints (the V2 "tensor bundle" format) that needs no
TensorFlow: numpy and a CRC32C only.

Importing TensorFlow costs ~580 MB of RSS and seconds; ``tf-migrate ckpt ls`` and
``compare`` read checkpoints with this instead, one tensor at a time.

Format: ``PREFIX.index`` is a LevelDB-style SSTable whose keys are variable names and
whose values are ``BundleEntryProto`` messages (dtype, shape, shard, offset, size,
masked CRC32C of the bytes); the empty key holds the ``BundleHeaderProto`` (number of
shards, endianness). ``PREFIX.data-SSSSS-of-NNNNN`` hold the raw tensor bytes.

Everything is checked as TensorFlow checks it, so this reader never accepts what
TensorFlow's rejects: every index block's CRC32C, every field's wire type, every
entry's shard, range and size, and every tensor's CRC32C when it is read. Anything it
does not handle (compressed index blocks, partitioned-variable slices, exotic dtypes)
raises ``Unsupported`` and callers fall back to TensorFlow's reader.

Imports inside functions: numpy, ml_dtypes and crc32c are loaded when a tensor is read or checked, so listing a checkpoint's names needs none of them.
"""
from __future__ import annotations

import os
import stat
import struct
from typing import Dict, Iterator, List, Tuple

from migrate.safeio import describe, read_regular

MAGIC = 0xDB4775248B80FB57
FOOTER = 48

# tensorflow/core/framework/types.proto
DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
          8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16", 18: "complex128",
          19: "float16", 22: "uint32", 23: "uint64"}
ITEMSIZE = {"float32": 4, "float64": 8, "int32": 4, "uint8": 1, "int16": 2, "int8": 1,
            "complex64": 8, "int64": 8, "bool": 1, "bfloat16": 2, "uint16": 2, "complex128": 16,
            "float16": 2, "uint32": 4, "uint64": 8}

# BundleEntryProto / BundleHeaderProto field -> wire type (0 varint, 2 bytes, 5 fixed32)
_ENTRY_WIRES = {1: 0, 2: 2, 3: 0, 4: 0, 5: 0, 6: 5, 7: 2}
_HEADER_WIRES = {1: 0, 2: 0, 3: 2}


class BundleError(Exception):
    """A missing, corrupt or truncated checkpoint."""


class Unsupported(Exception):
    """A valid checkpoint using a feature this reader leaves to TensorFlow."""


def _crc32c():
    """``crc32c.crc32c(data, value=0)``: hardware CRC32C over any buffer (bytearrays
    and memoryviews without a copy), the GIL released for large ones."""
    try:
        import crc32c
    except ImportError:  # pragma: no cover - a declared dependency
        raise Unsupported("the crc32c package is not installed") from None
    return crc32c


def _mask(crc: int) -> int:
    """LevelDB's masked CRC (what TensorFlow stores)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


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
        if shift > 63:
            raise BundleError("bad varint")


def _fields(data: bytes, wires: Dict[int, int] = None) -> Iterator[Tuple[int, int, object]]:
    """(field number, wire type, value) of a protobuf message; with ``wires``, a known
    field of another wire type is corruption (protobuf would refuse the message)."""
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise BundleError("protobuf field number 0")
        if wires is not None and number in wires and wires[number] != wire:
            raise BundleError(f"field {number} has wire type {wire}, not {wires[number]}")
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
    for number, _, value in _fields(data, {2: 2, 3: 0}):
        if number == 2:
            size = 0
            for n, _, v in _fields(value, {1: 0, 2: 2}):
                if n == 1:
                    size = _signed(v)
            if size < 0:
                raise Unsupported("a dimension of unknown size")
            dims.append(size)
        elif number == 3 and value:
            raise Unsupported("unknown rank")
    return tuple(dims)


class _Table:
    """Just enough of LevelDB's table format to list every key and value, with every
    block's CRC32C checked (as TensorFlow's table reader does)."""

    def __init__(self, data: bytes) -> None:
        if len(data) < FOOTER:
            raise BundleError("index file too short")
        footer = data[-FOOTER:]
        if struct.unpack("<Q", footer[-8:])[0] != MAGIC:
            raise BundleError("not a checkpoint index (bad magic number)")
        self.data = data
        self.crc = _crc32c()
        pos = 0
        _, pos = _varint(footer, pos)  # metaindex offset
        _, pos = _varint(footer, pos)  # metaindex size
        self.index_offset, pos = _varint(footer, pos)
        self.index_size, pos = _varint(footer, pos)
        if pos > FOOTER - 8:
            raise BundleError("bad index footer")

    def _block(self, offset: int, size: int) -> bytes:
        if offset + size + 5 > len(self.data) - FOOTER:
            raise BundleError("index block out of range (truncated index)")
        kind = self.data[offset + size]
        stored = struct.unpack("<I", self.data[offset + size + 1:offset + size + 5])[0]
        if _mask(self.crc.crc32c(memoryview(self.data)[offset:offset + size + 1])) != stored:
            raise BundleError("index block checksum mismatch")
        if kind != 0:
            raise Unsupported(f"compressed index block (type {kind})")
        return self.data[offset:offset + size]

    @staticmethod
    def _entries(block: bytes) -> Iterator[Tuple[bytes, bytes]]:
        """A block's (key, value) pairs. Its restart array (where TensorFlow's binary
        search lands) must point exactly at the entries that store their whole key."""
        if len(block) < 4:
            raise BundleError("index block too short")
        restarts = struct.unpack("<I", block[-4:])[0]
        limit = len(block) - 4 - 4 * restarts
        if limit < 0 or restarts == 0:
            raise BundleError("bad index block")
        points = struct.unpack(f"<{restarts}I", block[limit:limit + 4 * restarts])
        if points[0] != 0 or any(a >= b for a, b in zip(points, points[1:])) or points[-1] >= max(limit, 1):
            raise BundleError("bad restart points in index block")
        wanted = set(points)
        pos, key, seen = 0, b"", 0
        while pos < limit:
            start = pos
            shared, pos = _varint(block, pos)
            unshared, pos = _varint(block, pos)
            length, pos = _varint(block, pos)
            if start in wanted:
                if shared:
                    raise BundleError("bad restart point in index block")
                seen += 1
            if shared > len(key):
                raise BundleError("bad key prefix in index block")
            key = key[:shared] + block[pos:pos + unshared]
            pos += unshared
            value = block[pos:pos + length]
            pos += length
            if pos > limit:
                raise BundleError("truncated index entry")
            yield key, value
        if seen != restarts and limit:
            raise BundleError("bad restart points in index block")

    def items(self) -> Iterator[Tuple[bytes, bytes]]:
        """Every key and value, in order; each data block's keys must sort after the
        previous block's separator and no later than its own (TensorFlow seeks by them)."""
        previous, floor = None, None
        for separator, handle in self._entries(self._block(self.index_offset, self.index_size)):
            if floor is not None and separator <= floor:
                raise BundleError("index separators out of order")
            offset, pos = _varint(handle, 0)
            size, _ = _varint(handle, pos)
            for key, value in self._entries(self._block(offset, size)):
                if previous is not None and key <= previous:
                    raise BundleError("index keys out of order")
                if key > separator or (floor is not None and key <= floor):
                    raise BundleError("index key outside its block's range")
                previous = key
                yield key, value
            floor = separator


def _check_version(data: bytes) -> None:
    """The header's VersionDef, checked as TensorFlow checks it (this reader is bundle
    format version 1, and reads what any producer >= 0 wrote)."""
    producer, min_consumer, bad = 0, 0, []
    for number, wire, value in _fields(data, {1: 0, 2: 0}):
        if number == 1:
            producer = _signed(value)
        elif number == 2:
            min_consumer = _signed(value)
        elif number == 3:
            if wire == 0:
                bad.append(_signed(value))
            elif wire == 2:
                pos = 0
                while pos < len(value):
                    item, pos = _varint(value, pos)
                    bad.append(_signed(item))
            else:
                raise BundleError("bad bundle version")
    if producer < 0 or min_consumer > 1 or 1 in bad or producer > 1 << 31 or min_consumer < -(1 << 31):
        raise BundleError(f"bundle version {producer} (needs a reader of version {min_consumer})")


class Bundle:
    """``Bundle(prefix)``: ``.entries`` maps names to (shape, dtype); ``.read(name)`` one
    tensor (CRC32C checked; strings as an object array of bytes); ``.verify(name)``
    checks one without keeping it; ``.nbytes(name)`` its size on disk."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

        try:
            data = read_regular(prefix + ".index")  # a FIFO is refused without blocking
        except OSError as exc:
            raise BundleError(f"cannot open {os.path.basename(prefix)}.index: {describe(exc)}") from None
        self.num_shards = 1
        self._raw: Dict[str, Tuple[int, Tuple[int, ...], int, int, int, int]] = {}
        self._fds: Dict[int, int] = {}
        header = False
        for key, value in _Table(data).items():
            if key == b"":
                header = True
                for number, _, v in _fields(value, _HEADER_WIRES):
                    if number == 1:
                        self.num_shards = v
                    elif number == 2 and v != 0:
                        raise Unsupported("big-endian checkpoint")
                    elif number == 3:
                        _check_version(v)
                if not 1 <= self.num_shards <= 1 << 20:
                    raise BundleError(f"bad number of shards {self.num_shards}")
                continue
            if key[:1] == b"\x00":
                raise Unsupported("partitioned variable slices")  # slice keys are binary
            try:
                name = key.decode("utf-8")
            except UnicodeDecodeError:
                raise BundleError("a variable name that is not UTF-8") from None
            dtype, shape, shard, offset, size, crc = 0, (), 0, 0, 0, None
            for number, _, v in _fields(value, _ENTRY_WIRES):
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
                elif number == 6:
                    crc = struct.unpack("<I", v)[0]
                elif number == 7:
                    raise Unsupported("partitioned variable slices")
            if dtype not in DTYPES:
                raise Unsupported(f"dtype enum {dtype}")
            if crc is None:
                raise BundleError(f"{name}: no checksum in its index entry")
            if shard >= self.num_shards:
                raise BundleError(f"{name}: shard {shard} of {self.num_shards}")
            kind = DTYPES[dtype]
            if kind != "string":
                count = 1
                for dim in shape:
                    count *= dim
                if count * ITEMSIZE[kind] != size:
                    raise BundleError(f"{name}: {size} bytes do not hold a {kind} tensor of shape {shape}")
            self._raw[name] = (dtype, shape, shard, offset, size, crc)
        if not header:
            raise BundleError("no bundle header in the index")
        self.entries = {name: (shape, DTYPES[dtype]) for name, (dtype, shape, *_rest) in self._raw.items()}

    # -- files -----------------------------------------------------------------------
    def _shard(self, shard: int) -> str:
        return f"{self.prefix}.data-{shard:05d}-of-{self.num_shards:05d}"

    def _fd(self, shard: int) -> int:
        fd = self._fds.get(shard)
        if fd is None:
            path = self._shard(shard)
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))

                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    os.close(fd)
                    raise BundleError(f"{os.path.basename(path)} is not a regular file")
            except OSError as exc:
                raise BundleError(f"cannot open {os.path.basename(path)}: {exc.strerror}") from None
            self._fds[shard] = fd
        return fd

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def check_files(self) -> None:
        """Every data file there and long enough for every tensor it should hold (one
        stat per shard: what ``ckpt ls`` checks without reading the data)."""
        ends: Dict[int, int] = {}
        for _, _, shard, offset, size, _ in self._raw.values():
            ends[shard] = max(ends.get(shard, 0), offset + size)
        for shard in range(self.num_shards):
            have = os.fstat(self._fd(shard)).st_size
            if have < ends.get(shard, 0):
                raise BundleError(f"the data file {os.path.basename(self._shard(shard))} is truncated "
                                  f"({have} of at least {ends[shard]} bytes)")

    def _pread(self, name: str, fd: int, offset: int, size: int) -> bytes:
        parts: List[bytes] = []
        got = 0
        while got < size:
            try:
                chunk = os.pread(fd, min(size - got, 1 << 30), offset + got)
            except OSError as exc:
                raise BundleError(f"{name}: cannot read the data file: {exc.strerror}") from None
            if not chunk:
                raise BundleError(f"{name}: the data file is truncated ({got} of {size} bytes)")
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    # -- tensors -----------------------------------------------------------------------
    def nbytes(self, name: str) -> int:
        return self._raw[name][4]

    def is_string(self, name: str) -> bool:
        return DTYPES[self._raw[name][0]] == "string"

    def numpy_dtype(self, name: str):
        import numpy as np

        kind = DTYPES[self._raw[name][0]]
        if kind == "string":
            return np.dtype(object)
        if kind == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(kind)

    def locate(self, name: str) -> Tuple[int, int, int, int]:
        """(open data file descriptor, offset, size in bytes, stored masked CRC32C)."""
        _, _, shard, offset, size, crc = self._raw[name]
        return self._fd(shard), offset, size, crc

    def _raw_bytes(self, name: str) -> bytes:
        fd, offset, size, crc = self.locate(name)
        buffer = self._pread(name, fd, offset, size) if size else b""
        if self.is_string(name):
            _strings(name, buffer, self._raw[name][1], crc)  # its own checksum layout
        elif _mask(_crc32c().crc32c(buffer)) != crc:
            raise BundleError(f"{name}: checksum mismatch in the data file (corrupt)")
        return buffer

    def verify(self, name: str) -> None:
        """Check one tensor's CRC32C (in 8 MiB chunks: memory stays flat)."""
        if self.nbytes(name) <= STREAM or self.is_string(name):
            self._raw_bytes(name)
            return
        for _ in self.chunks(name, bytearray(STREAM)):
            pass  # chunks() checks the CRC32C after the last one

    def chunks(self, name: str, buffer) -> Iterator[bytearray]:
        """The tensor's raw bytes in chunks read into ``buffer`` itself (no allocation per
        chunk: use each chunk before asking for the next), or, when ``buffer`` is a
        callable, into the buffer it returns for each chunk (None: stop). The last,
        shorter chunk comes in a bytearray of its own. Buffer lengths must be equal and a
        multiple of every itemsize. The CRC32C is checked after the last chunk: a caller
        must consume every chunk before it trusts any."""
        fd, offset, total, crc = self.locate(name)
        crc32c = _crc32c()
        size = STREAM if callable(buffer) else len(buffer)
        running, done = 0, 0
        while done < total:
            if total - done < size:
                chunk = bytearray(total - done)
            else:
                chunk = buffer() if callable(buffer) else buffer
                if chunk is None:
                    return
            view, got = memoryview(chunk), 0
            while got < len(chunk):
                try:
                    n = os.preadv(fd, [view[got:]], offset + done + got)
                except OSError as exc:
                    raise BundleError(f"{name}: cannot read the data file: {exc.strerror}") from None
                if not n:
                    raise BundleError(f"{name}: the data file is truncated ({done + got} of {total} bytes)")
                got += n
            running = crc32c.crc32c(chunk, running)
            done += len(chunk)
            yield chunk
        if _mask(running) != crc:
            raise BundleError(f"{name}: checksum mismatch in the data file (corrupt)")

    def read(self, name: str):
        import numpy as np

        dtype, shape, *_ = self._raw[name]
        buffer = self._raw_bytes(name)
        kind = DTYPES[dtype]
        if kind == "string":
            return _strings(name, buffer, shape, self._raw[name][5])
        return np.frombuffer(buffer, dtype=self.numpy_dtype(name)).reshape(shape)


STREAM = 8 << 20  # bytes per streamed chunk


def _strings(name: str, buffer: bytes, shape: Tuple[int, ...], entry_crc: int):
    """A string tensor: varint lengths, the masked CRC32C of the lengths (as uint32),
    then the bytes; an object array of ``bytes`` like TensorFlow's reader returns. The
    entry's CRC32C runs over the lengths as uint32, then every byte after the varints."""
    import numpy as np

    count = 1
    for dim in shape:
        count *= dim
    pos, lengths = 0, []
    try:
        for _ in range(count):
            length, pos = _varint(buffer, pos)
            lengths.append(length)
    except BundleError:
        raise BundleError(f"{name}: bad string lengths in the data file (corrupt)") from None
    if pos + 4 + sum(lengths) != len(buffer):
        raise BundleError(f"{name}: string lengths do not add up (corrupt)")
    crc = _crc32c().crc32c(struct.pack(f"<{count}I", *lengths)) if count else 0
    if _mask(crc) != struct.unpack("<I", buffer[pos:pos + 4])[0]:
        raise BundleError(f"{name}: string length checksum mismatch (corrupt)")
    if _mask(_crc32c().crc32c(memoryview(buffer)[pos:], crc)) != entry_crc:
        raise BundleError(f"{name}: checksum mismatch in the data file (corrupt)")
    pos += 4
    out = np.empty(count, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = bytes(buffer[pos:pos + length])
        pos += length
    return out[0] if shape == () else out.reshape(shape)  # a scalar is bytes, as in TensorFlow
