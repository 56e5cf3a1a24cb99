"""Many rows into one table in one statement: each column passed as a list and unnested by DuckDB.

``executemany`` runs one INSERT per row; a derived table of tens of thousands of rows (provenance,
community members) then costs seconds, where one statement over column lists costs milliseconds.
"""

from __future__ import annotations

from typing import Sequence

import duckdb


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence], columns: Sequence[str] = (),
                verb: str = "INSERT") -> None:
    """Insert ``rows`` (equal-length sequences, in the table's column order or ``columns``'s) into ``table``
    in one statement; the rows keep their order. ``verb``: ``INSERT`` or ``INSERT OR REPLACE``.

    Raises:
        duckdb.Error: as the row-by-row insert would (a key conflict, a value of the wrong type).
    """
    if not rows:
        return
    n = len(rows[0])
    cols = [list(c) for c in zip(*rows)]
    names = f" ({', '.join(columns)})" if columns else ""
    picks = ", ".join(f"unnest(${i + 1})" for i in range(n))
    con.execute(f"{verb} INTO {table}{names} SELECT {picks}", cols)
