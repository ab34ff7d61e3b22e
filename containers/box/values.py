"""Standard-library values as plain data, so that they reach the tests with their type and semantics
(the receiver rebuilds them with its own standard library, so their __eq__ is never the sender's):

    {"V": [kind, ...]}        range, Fraction, Decimal, date, datetime, time, timedelta, deque (numbered)
    {"N": [typename, fields, [values]]}   a namedtuple instance: the receiver's class of that name when
                              it is a namedtuple with those fields (the prompt's), else one made for it
    {"E": [class, member, fallback, module, qualname]}   an enum member: the receiver's enum of that class
                              name when it has that member (the prompt's or test's), else the standard
                              library's (a module the receiver imported), else the fallback (a handle)
    {"W": [kind, [items]]}    a dict view (keys, values, items), rebuilt from a fresh dict
    {"J": [[items], rest]}    an iterator (generator, map, filter, zip, ...), run on the sender's side
                              for at most ITER_PREFIX items; `rest` is null when it ended there, a handle
                              to the rest of it otherwise, or {"X": exception} when it raised

Subclasses of built-in scalars and containers cross as their base value: the subclass's own methods
never run on the receiving side."""

import collections
import datetime
import decimal
import enum
import fractions
import keyword

from .text import safe_str

ITER_PREFIX = 10_000

_TIME_TYPES = {datetime.date: "date", datetime.datetime: "datetime", datetime.time: "time",
               datetime.timedelta: "timedelta"}
_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}
_SCALARS = (int, float, str, bytes, complex)
_CONTAINERS = (list, dict, set, tuple, frozenset)
_namedtuples = {}


def is_iterator(t) -> bool:
    """A built-in or itertools iterator type (a generator, map, zip, a list iterator...)."""
    return getattr(t, "__module__", None) in ("builtins", "itertools") and hasattr(t, "__next__")


def encode(enc, value, t, depth):
    """The data for `value` (not a type the codec itself handles), or None when it is not one of these."""
    if t is range:
        return {"V": ["range", enc.enc(value.start), enc.enc(value.stop), enc.enc(value.step)]}
    if t is fractions.Fraction:
        return {"V": ["Fraction", enc.enc(value.numerator), enc.enc(value.denominator)]}
    if t is decimal.Decimal:
        return {"V": ["Decimal", decimal.Decimal.__str__(value)]}
    kind = _TIME_TYPES.get(t)
    if kind == "timedelta":
        return {"V": ["timedelta", value.days, value.seconds, value.microseconds]}
    if kind is not None:
        tzinfo = value.tzinfo if kind != "date" else None
        if tzinfo is not None and type(tzinfo) is not datetime.timezone:
            return None                  # a tzinfo of the candidate's: by handle
        tz = tzinfo.utcoffset(None) if tzinfo is not None else None
        return {"V": [kind, value.isoformat() if kind != "datetime" else value.replace(tzinfo=None).isoformat(),
                      None if tz is None else tz.total_seconds()]}
    kind = _VIEWS.get(t)
    if kind is not None:
        return {"W": [kind, [enc.enc(v, depth + 1) for v in value]]}
    if isinstance(value, enum.Enum):
        fallback = enc.enc_handle(value)
        module, qualname = getattr(t, "__module__", None), getattr(t, "__qualname__", None)
        return {"E": [t.__name__, value.name if type(value.name) is str else "", fallback,
                      module if type(module) is str else "", qualname if type(qualname) is str else ""]}
    if issubclass(t, tuple) and type(getattr(t, "_fields", None)) is tuple:
        fields = [f for f in t._fields if type(f) is str]
        return {"N": [t.__name__ if type(t.__name__) is str else "", fields,
                      [enc.enc(v, depth + 1) for v in tuple.__iter__(value)]]}
    for base in _SCALARS:
        if isinstance(value, base):   # a subclass: its base value (the subclass's methods never run there)
            return enc.enc(_base_scalar(base, value), depth)
    for base in _CONTAINERS:
        if isinstance(value, base):
            return enc.enc(_base_container(base, value), depth)
    if is_iterator(t):   # generators included
        return _encode_iterator(enc, value, depth)
    return None


def _base_scalar(base, value):
    if base is int:
        return int.__int__(value)
    if base is float:
        return float.__float__(value)
    if base is str:
        return str.__str__(value)
    if base is bytes:
        return bytes(memoryview(value))
    return complex(complex.real.__get__(value), complex.imag.__get__(value))


def _base_container(base, value):
    if base is dict:
        return dict(dict.items(value))
    return base(base.__iter__(value))


def _encode_iterator(enc, it, depth):
    items = []
    for _ in range(ITER_PREFIX):
        try:
            item = next(it)
        except StopIteration:
            return {"J": [items, None]}
        except Exception as e:   # the iterator raised: the receiver raises it where Python would
            return {"J": [items, {"X": {"type": type(e).__name__, "msg": safe_str(e)}}]}
        items.append(enc.enc(item, depth + 1))
    rest = enc.enc_handle(it)
    if rest is None:
        raise enc.Unencodable(f"an iterator longer than {ITER_PREFIX} items")
    return {"J": [items, rest]}


def decode(dec, tag, body, depth, env):
    """The value of a {"V"|"N"|"E"|"W"|"J": body}; `env` (the test side) resolves the prompt's classes
    and makes iterators that continue in the candidate."""
    if tag == "V":
        kind = body[0]
        if kind == "range":
            return range(dec.dec(body[1]), dec.dec(body[2]), dec.dec(body[3]))
        if kind == "Fraction":
            return fractions.Fraction(dec.dec(body[1]), dec.dec(body[2]))
        if kind == "Decimal":
            return decimal.Decimal(_str(body[1]))
        if kind == "timedelta":
            return datetime.timedelta(days=body[1], seconds=body[2], microseconds=body[3])
        if kind in ("date", "datetime", "time"):
            cls = {"date": datetime.date, "datetime": datetime.datetime, "time": datetime.time}[kind]
            value = cls.fromisoformat(_str(body[1]))
            if body[2] is not None:
                value = value.replace(tzinfo=datetime.timezone(datetime.timedelta(seconds=float(body[2]))))
            return value
        raise ValueError("unknown value kind")
    if tag == "W":
        items = [dec.dec(v, depth + 1) for v in body[1]]
        if body[0] == "keys":
            return dict.fromkeys(items).keys()
        if body[0] == "values":
            return dict(enumerate(items)).values()
        return dict(items).items()
    if tag == "N":
        name, fields, values = _str(body[0]), [_str(f) for f in body[1]], [dec.dec(v, depth + 1) for v in body[2]]
        cls = env.resolve(name) if env is not None else None
        if not (isinstance(cls, type) and issubclass(cls, tuple) and getattr(cls, "_fields", None) == tuple(fields)):
            cls = _namedtuple(name, fields)
        return cls(*values) if cls is not None else tuple(values)
    if tag == "E":   # the prompt's or test's enum of that name, or a standard-library one imported here
        cls = env.resolve(_str(body[0])) if env is not None else None
        if not (isinstance(cls, type) and issubclass(cls, enum.Enum)) and len(body) == 5:
            cls = _imported(_str(body[3]), _str(body[4]))
        if isinstance(cls, type) and issubclass(cls, enum.Enum) and _str(body[1]) in cls.__members__:
            return cls.__members__[body[1]]
        return dec.dec(body[2], depth + 1)
    if tag == "J":
        items = [dec.dec(v, depth + 1) for v in body[0]]
        rest = body[1]
        if rest is None:
            return iter(items)
        if env is None:
            raise ValueError("an iterator that continues elsewhere")
        if type(rest) is dict and set(rest) == {"X"}:
            return env.iterator(items, None, rest["X"])
        return env.iterator(items, dec.dec(rest, depth + 1), None)
    raise ValueError("unknown tag")


def _imported(module, qualname):
    """A class of a module this process has already imported (nothing is imported, no dunder is read)."""
    import sys
    if module in ("", "candidate", "__main__"):
        return None
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        if obj is None or not part or part.startswith("__"):
            return None
        obj = getattr(obj, part, None)
    return obj


def _namedtuple(name, fields):
    key = (name, tuple(fields))
    if key not in _namedtuples:
        if not name.isidentifier() or keyword.iskeyword(name) or len(_namedtuples) > 1000:
            return None
        _namedtuples[key] = collections.namedtuple(name, fields, rename=True)
    return _namedtuples[key]


def _str(x):
    if type(x) is not str:
        raise ValueError("malformed value")
    return x


def new_deque(body):
    maxlen = body[0]
    if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
        raise ValueError("malformed value")
    return collections.deque(maxlen=maxlen)
