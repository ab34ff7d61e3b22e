"""Plain-data encoding: the only shape in which values cross between candidate and tests.

Scalars are JSON scalars, or a one-key object: {"I": hex} big int, {"F": hex} float, {"B": hex} bytes,
{"C": [re, im]} complex, {"T": [...]} tuple, {"Z": [...]} frozenset. Mutable containers are numbered in
the order they are first met (depth first, a container before its items): a JSON array is a new list,
{"D": [[k, v], ...]} a new dict, {"S": [...]} a new set, {"Y": hex} a new bytearray, and {"R": n} the
container numbered n, met earlier. So aliasing and cycles cross intact, and a reply can refer to the
containers the tests passed in (numbered first, on both sides) to mean the test's own objects.

The standard library's dict types cross as themselves, numbered like dicts: {"K": [kind, factory,
[[k, v], ...]]} with kind Counter, OrderedDict or defaultdict (its default_factory when that is a
built-in type, else null); the receiver builds them with its own collections module, so their __eq__ is
the standard library's, never the sender's. A built-in type as a value (`int`, `str`, ...: MBPP's tests
pass them) is {"P": name}, looked up among the built-in types only."""

import operator
import sys
from collections import Counter, OrderedDict, defaultdict, deque

from . import values

from .text import clean_name


MAX_DEPTH = 1000      # nesting of a value that crosses between candidate and tests (see deep())


class Unencodable(Exception):
    pass


MUTABLE = (list, dict, set, bytearray)
DICT_KINDS = {"Counter": Counter, "OrderedDict": OrderedDict, "defaultdict": defaultdict}
_DICT_TYPES = {v: k for k, v in DICT_KINDS.items()}
BUILTIN_TYPES = {t.__name__: t for t in (int, float, str, bool, bytes, bytearray, complex, list, dict, set,
                                          tuple, frozenset, object, type, range, slice, type(None))}


class Encoder:
    """`handles` (the candidate side only): a Handles table; a value that is not plain data is then
    entered in it and sent as {"H": [n, type name, callable]}, so the tests can call its methods through
    the proxy without the value itself (or its own __eq__) ever reaching them. `handle_of` (the test
    side): how to number a test-side Handle the test passes back ({"H": n})."""
    __slots__ = ("objects", "ids", "handles", "tag")
    Unencodable = Unencodable

    def __init__(self, known=(), handles=None, tag="H"):
        self.objects = list(known)                  # numbered containers; kept alive so ids stay unique
        self.ids = {id(o): i for i, o in enumerate(self.objects)}
        self.handles = handles
        self.tag = tag      # "H": the candidate's objects; "X": the test's, which the candidate may call back

    def enc(self, value, depth=0):
        t = type(value)
        if value is None or t is bool or t is str:
            return value
        if t is int:
            return value if -(2**53) < value < 2**53 else {"I": hex(value)}
        if t is float:
            return {"F": value.hex()}
        if depth > MAX_DEPTH:
            raise Unencodable(f"a value nested deeper than {MAX_DEPTH} levels")
        if t is list or t is dict or t is set or t is bytearray or (t is Counter or t is OrderedDict or t is defaultdict
                                                                    or t is deque):
            ref = self.ids.get(id(value))
            if ref is not None:
                return {"R": ref}
            self.ids[id(value)] = len(self.objects)
            self.objects.append(value)
            return self.content(value, depth)
        if t is tuple:
            return {"T": [self.enc(v, depth + 1) for v in value]}
        if t is frozenset:
            return {"Z": [self.enc(v, depth + 1) for v in value]}
        if t is bytes:
            return {"B": value.hex()}
        if t is complex:
            return {"C": [value.real.hex(), value.imag.hex()]}
        if t is type and BUILTIN_TYPES.get(getattr(value, "__name__", None)) is value:
            return {"P": value.__name__}
        ref = getattr(value, "_passk_handle", None) if t.__name__ == "Handle" else None
        if type(ref) is int:  # a test-side Handle going back to the candidate: its number only
            return {"H": ref}
        ref = getattr(value, "_passk_test_object", None) if t.__name__ == "TestObject" else None
        if type(ref) is int:  # a test's object going back to the tests: its number only
            return {"X": ref}
        data = values.encode(self, value, t, depth)
        if data is not None:
            return data
        data = self.enc_handle(value)
        if data is not None:
            return data
        raise Unencodable(f"a value of type {clean_name(t.__name__)}")

    def enc_handle(self, value):
        """{"H": [n, type, callable]} for an object the tests may hold only by handle; None on the test side."""
        if self.handles is None:
            return None
        return {self.tag: [self.handles.add(value), clean_name(type(value).__name__), callable(value)]}

    def content(self, value, depth=0):
        """What a numbered container holds (its items, not a reference to it)."""
        t = type(value)
        if t is list:
            return [self.enc(v, depth + 1) for v in value]
        if t is dict:
            return {"D": [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in value.items()]}
        if t is set:
            return {"S": [self.enc(v, depth + 1) for v in value]}
        if t is bytearray:
            return {"Y": value.hex()}
        if t is deque:
            return {"Q": [value.maxlen, [self.enc(v, depth + 1) for v in value]]}
        factory = getattr(value, "default_factory", None)
        factory = factory.__name__ if type(factory) is type and BUILTIN_TYPES.get(factory.__name__) is factory else None
        return {"K": [_DICT_TYPES[t], factory,
                      [[self.enc(k, depth + 1), self.enc(v, depth + 1)] for k, v in value.items()]]}


def _held(body, table, make, malformed):
    """An object one side holds for the other (a handle, or a test's object): from `table` on the side that
    holds it, or a stand-in from `make(number, type name, callable)` on the side that refers to it."""
    if table is not None and type(body) is int:
        return table.get(body)
    if make is not None and type(body) is list and len(body) == 3 and type(body[0]) is int:
        return make(body[0], _text(body[1]), body[2] is True)
    raise Unencodable(malformed)


class Decoder:
    """`handles` (the candidate side): resolves {"H": n} to the object the table holds. `make_handle` (the
    test side): makes a Handle of {"H": [n, type, callable]}."""
    __slots__ = ("objects", "handles", "make_handle", "env", "exports", "make_test_object")

    def __init__(self, known=(), handles=None, make_handle=None, env=None, exports=None, make_test_object=None):
        self.objects = list(known)
        self.handles = handles
        self.make_handle = make_handle
        self.exports = exports                    # the test side: its own objects the candidate holds
        self.make_test_object = make_test_object  # the candidate side: a stand-in for one of them
        self.env = env   # resolves class names in the receiver's own code, makes continuing iterators

    def dec(self, data, depth=0):
        t = type(data)
        if data is None or t is bool or t is int or t is str:
            return data
        if depth > MAX_DEPTH + 1:
            raise Unencodable("a value nested too deeply")
        if t is list:
            out = []
            self.objects.append(out)
            for v in data:
                out.append(self.dec(v, depth + 1))
            return out
        if t is not dict or len(data) != 1:
            raise Unencodable("malformed value")
        (tag, body), = data.items()
        if tag == "R":
            if type(body) is not int or not 0 <= body < len(self.objects):
                raise Unencodable("a reference to nothing")
            return self.objects[body]
        if tag == "H":
            return _held(body, self.handles, self.make_handle, "a malformed handle")
        if tag == "X":
            return _held(body, self.exports, self.make_test_object, "a malformed reference to a test's object")
        if tag == "D":
            out = {}
            self.objects.append(out)
            for pair in _pairs(body):
                key = self.dec(pair[0], depth + 1)   # the key first: numbering follows the encoder's order
                out[key] = self.dec(pair[1], depth + 1)
            return out
        if tag == "S":
            out = set()
            self.objects.append(out)
            for v in _items(body):
                out.add(self.dec(v, depth + 1))
            return out
        if tag == "Y":
            out = bytearray.fromhex(_text(body))
            self.objects.append(out)
            return out
        if tag == "K":
            out = _new_dict_kind(body)
            self.objects.append(out)
            for pair in _pairs(body[2]):
                key = self.dec(pair[0], depth + 1)
                out[key] = self.dec(pair[1], depth + 1)
            return out
        if tag == "Q":
            if type(body) is not list or len(body) != 2:
                raise Unencodable("malformed value")
            try:
                out = values.new_deque(body)
            except ValueError:
                raise Unencodable("malformed value") from None
            self.objects.append(out)
            for v in _items(body[1]):
                out.append(self.dec(v, depth + 1))
            return out
        if tag in ("V", "N", "E", "W", "J"):
            try:
                return values.decode(self, tag, _items(body), depth, self.env)
            except (ValueError, TypeError, IndexError, KeyError, OverflowError, ArithmeticError) as e:
                raise Unencodable(f"malformed value ({type(e).__name__})") from None
        if tag == "P":
            if _text(body) not in BUILTIN_TYPES:
                raise Unencodable("an unknown built-in type")
            return BUILTIN_TYPES[body]
        if tag == "I":
            return int(_text(body), 16)
        if tag == "F":
            return float.fromhex(_text(body))
        if tag == "T":
            return tuple([self.dec(v, depth + 1) for v in _items(body)])
        if tag == "Z":
            return frozenset([self.dec(v, depth + 1) for v in _items(body)])
        if tag == "B":
            return bytes.fromhex(_text(body))
        if tag == "C":
            re_, im = _items(body)
            return complex(float.fromhex(_text(re_)), float.fromhex(_text(im)))
        raise Unencodable(f"unknown tag {clean_name(tag)}")

    def fill(self, target, body):
        """Decode `body`, the new content of `target` (a container the tests passed in), without applying it."""
        t = type(target)
        if t is list:
            return [self.dec(v, 1) for v in _items(body)]
        if t is dict or (t is Counter or t is OrderedDict or t is defaultdict):
            tag = "D" if t is dict else "K"
            if type(body) is not dict or set(body) != {tag}:
                raise Unencodable("malformed content")
            if tag == "K" and (type(body["K"]) is not list or len(body["K"]) != 3):
                raise Unencodable("malformed content")
            pairs = []
            for pair in _pairs(body["D"] if tag == "D" else body["K"][2]):
                key = self.dec(pair[0], 1)
                pairs.append((key, self.dec(pair[1], 1)))
            return pairs
        if t is set:
            if type(body) is not dict or set(body) != {"S"}:
                raise Unencodable("malformed content")
            return [self.dec(v, 1) for v in _items(body["S"])]
        if t is deque:
            if type(body) is not dict or set(body) != {"Q"} or type(body["Q"]) is not list or len(body["Q"]) != 2:
                raise Unencodable("malformed content")
            return [self.dec(v, 1) for v in _items(body["Q"][1])]
        if type(body) is not dict or set(body) != {"Y"}:
            raise Unencodable("malformed content")
        return bytes.fromhex(_text(body["Y"]))


def _new_dict_kind(body):
    if type(body) is not list or len(body) != 3 or body[0] not in DICT_KINDS:
        raise Unencodable("malformed value")
    if body[0] != "defaultdict":
        return DICT_KINDS[body[0]]()
    if body[1] is not None and body[1] not in BUILTIN_TYPES:
        raise Unencodable("malformed value")
    return defaultdict(BUILTIN_TYPES[body[1]] if body[1] is not None else None)


def _items(body):
    if type(body) is not list:
        raise Unencodable("malformed value")
    return body


def _pairs(body):
    for pair in _items(body):
        if type(pair) is not list or len(pair) != 2:
            raise Unencodable("malformed value")
        yield pair


def _text(body):
    if type(body) is not str:
        raise Unencodable("malformed value")
    return body


class Handles:
    """The candidate side's table of objects the tests hold handles to (for the life of one job)."""
    __slots__ = ("objects",)

    def __init__(self):
        self.objects = []

    def add(self, obj) -> int:
        self.objects.append(obj)
        return len(self.objects) - 1

    def get(self, n):
        if not 0 <= n < len(self.objects):
            raise Unencodable("a handle to nothing")
        return self.objects[n]


def apply_content(target, new) -> None:
    """Make `target` (one of the test's own containers) hold `new`, in place: references to it stay live."""
    t = type(target)
    if t is list or t is bytearray:
        target[:] = new
    elif t is deque:
        target.clear()
        target.extend(new)
    elif t is dict:
        target.clear()
        target.update(new)
    elif (t is Counter or t is OrderedDict or t is defaultdict):
        target.clear()
        for key, value in new:     # item by item: Counter.update would add counts
            target[key] = value
    else:
        target.clear()
        target.update(new)


class deep:
    """A recursion limit high enough for MAX_DEPTH levels while a value is encoded or decoded (the
    codec and JSON recurse per level), put back afterwards: the candidate's own code keeps Python's."""

    def __enter__(self):
        self.old = sys.getrecursionlimit()
        if self.old < 8 * MAX_DEPTH:
            sys.setrecursionlimit(8 * MAX_DEPTH)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.old)


def encode(value):
    return Encoder().enc(value)


def decode(data):
    return Decoder().dec(data)


def snapshot(obj):
    """What a container held when the candidate received it (shallow; items compared by identity)."""
    t = type(obj)
    if t is list or t is deque:
        return list(obj)
    if t is dict or (t is Counter or t is OrderedDict or t is defaultdict):
        return list(obj), list(obj.values())
    if t is set:
        return frozenset(obj)
    return bytes(obj)


def changed(obj, before) -> bool:
    t = type(obj)
    if t is list or t is deque:
        return len(obj) != len(before) or not all(map(operator.is_, obj, before))
    if t is dict or (t is Counter or t is OrderedDict or t is defaultdict):
        keys, values = before
        return (len(obj) != len(keys) or not all(map(operator.is_, obj, keys))
                or not all(map(operator.is_, obj.values(), values)))
    return obj != before
