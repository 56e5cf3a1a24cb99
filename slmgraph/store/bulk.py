"""Many rows into one table in one statement (one concern): :func:`insert_rows`, :func:`insert_columns`,
:func:`delete_keys`.

DuckDB's ``executemany`` runs its statement once per row, and a Python list of floats becomes one
DuckDB value per float, so inserting rows one by one (or vectors as lists) costs far more than the
data. Here each column is one list parameter, unnested side by side in one ``INSERT ... SELECT``
(row ``i`` of the insert is element ``i`` of every list, in order); a column of vectors is a 2-D
NumPy array, registered with the connection as a NumPy relation (one array per row, no per-float
conversion) and joined to the other columns by row number. Nothing here needs pandas or pyarrow.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

#: Name of the NumPy relation a vector column is registered under for one statement.
_VECTORS = "_slmgraph_bulk_vectors"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def insert_columns(con, table: str, columns: Mapping[str, Sequence | np.ndarray], replace: Sequence[str] = ()) -> int:
    """Insert the rows given column by column into ``table`` in one statement.

    Args:
        con: a DuckDB connection (inside the caller's transaction, if any).
        table: the table; ``columns`` names the columns to fill (the others get their defaults).
        columns: column name -> its values, one per row: a list (``None`` is NULL, NumPy scalars are read as
            Python numbers; DuckDB casts the values to the column's type as an ``INSERT`` of them would), or
            for a list column such as ``FLOAT[]`` a 2-D NumPy array, one row per table row.
        replace: key columns (among ``columns``): a stored row with the key of a given row is deleted first, so
            the given row replaces it (after the other rows, in the order given); the rows given must not
            repeat a key. Not ``INSERT OR REPLACE``, which reorders the rows of one statement (DuckDB writes
            its conflict checks in parallel).

    Returns:
        the number of rows inserted (0 for empty columns: nothing is executed).

    Raises:
        ValueError: no columns, or columns of different lengths, or a NumPy array that is not 1-D or 2-D.
    """
    if not columns:
        raise ValueError("insert_columns: no columns given")
    lengths = {name: len(values) for name, values in columns.items()}
    n = next(iter(lengths.values()))
    if any(k != n for k in lengths.values()):
        raise ValueError(f"insert_columns into {table}: columns of different lengths {lengths}")
    if n == 0:
        return 0
    plain: dict[str, list] = {}  # the columns passed as list parameters
    vectors = []
    for name, values in columns.items():
        if isinstance(values, np.ndarray):
            if values.ndim == 2:
                vectors.append(name)
                continue
            if values.ndim != 1:
                raise ValueError(f"insert_columns into {table}: column {name} has {values.ndim} dimensions")
            values = values.tolist()
        values = list(values)
        # DuckDB reads no NumPy scalar inside a list; the types are checked once each (a writer's per-row cost).
        if any(issubclass(t, np.generic) for t in set(map(type, values))):
            values = [v.item() if isinstance(v, np.generic) else v for v in values]
        plain[name] = values
    if replace:
        delete_keys(con, table, replace, list(zip(*(plain[c] for c in replace))))
    scalars, params = list(plain), list(plain.values())
    names = ", ".join(_quote(c) for c in scalars + vectors)
    if not vectors:
        con.execute(f"INSERT INTO {_quote(table)} ({names}) SELECT " + ", ".join("unnest(?)" for _ in scalars),
                    params)
        return n
    rel = {"_row": np.arange(n, dtype=np.int64)}
    for name in vectors:
        col = np.empty(n, dtype=object)
        col[:] = list(columns[name])  # one 1-D array per row: DuckDB reads each as one list value
        rel[name] = col
    inner = ", ".join([f"unnest(?) AS {_quote(c)}" for c in scalars] + ["unnest(?) AS _row"])
    picked = ", ".join([f"s.{_quote(c)}" for c in scalars] + [f"v.{_quote(c)}" for c in vectors])
    con.register(_VECTORS, rel)
    try:
        con.execute(f"INSERT INTO {_quote(table)} ({names}) SELECT {picked} FROM (SELECT {inner}) s "
                    f"JOIN {_VECTORS} v USING (_row) ORDER BY _row", params + [list(range(n))])
    finally:
        con.unregister(_VECTORS)
    return n


def insert_rows(con, table: str, columns: Sequence[str], rows: Sequence[Sequence], replace: Sequence[str] = ()) -> int:
    """Insert ``rows`` (each a sequence of values in the order of ``columns``) into ``table`` in one
    statement (:func:`insert_columns`, which says how values are read). Returns the number of rows.

    Raises:
        ValueError: a row does not have one value per column.
    """
    if not rows:
        return 0
    if any(len(r) != len(columns) for r in rows):
        raise ValueError(f"insert_rows into {table}: a row does not have {len(columns)} values ({', '.join(columns)})")
    return insert_columns(con, table, dict(zip(columns, (list(c) for c in zip(*rows)))), replace)


def delete_keys(con, table: str, columns: Sequence[str], keys: Sequence[Sequence]) -> None:
    """Delete the rows of ``table`` whose ``columns`` equal one of ``keys`` (each a sequence of values in
    the order of ``columns``), in one statement; no keys, no statement."""
    if not keys:
        return
    inner = ", ".join(f"unnest(?) AS _k{i}" for i in range(len(columns)))
    match = " AND ".join(f"{_quote(table)}.{_quote(c)} = _keys._k{i}" for i, c in enumerate(columns))
    con.execute(f"DELETE FROM {_quote(table)} USING (SELECT {inner}) _keys WHERE {match}",
                [list(c) for c in zip(*keys)])
