"""When a model's statement provably returns no rows: a formula over the tables it reads, from sqlglot's parse.

A scan plans a statement (Spark analyses and optimises it, and keeps or writes its result) even when every table it
reads turned out empty: on a small input that fixed cost is most of the scan (issue 52). The runner asks
`is_empty(formula, empty)` with the tables the parse pass found empty, and builds nothing for a model whose answer is
yes: its table is an empty one of its declared columns, a check of it adds no finding.

The formula only ever claims emptiness where SQL semantics force it, whatever the rows and parameters:
- FROM a, [INNER|CROSS|SEMI] JOIN b: empty when a or b is;  LEFT [OUTER|ANTI] JOIN b: when a is;
  RIGHT JOIN b: when b is;  FULL JOIN b: when both are.
- WHERE, HAVING, QUALIFY, LIMIT, window functions, LATERAL VIEW (without OUTER) only remove or keep rows.
- GROUP BY: empty when its source is; a global aggregate (an aggregate without GROUP BY) returns one row: never.
- UNION: when every branch is;  INTERSECT: when either is;  EXCEPT: when its left side is.
- A CTE or subquery: its own formula. Anything else (no FROM, VALUES, a table function, LATERAL VIEW OUTER,
  a construct not listed here): never empty.

Formulas are JSON (the registry caches them with the parse): `false`, a table name, `{"or": [...]}`,
`{"and": [...]}`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Formula = Any  # bool | str | dict[str, list[Formula]]

#: Spark's aggregate functions that sqlglot reads as anonymous calls (a global aggregate of them returns a row).
_ANONYMOUS_AGGREGATES = frozenset({
    "any", "any_value", "approx_count_distinct", "array_agg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or",
    "collect_list", "collect_set", "count", "count_if", "every", "first", "first_value", "histogram_numeric", "last",
    "last_value", "listagg", "max", "max_by", "median", "min", "min_by", "mode", "percentile", "percentile_approx",
    "some", "string_agg", "sum", "try_avg", "try_sum", "avg"})


def _or(parts: list[Formula]) -> Formula:
    parts = [p for p in parts if p is not False]
    if not parts:
        return False
    return parts[0] if len(parts) == 1 else {"or": parts}


def _and(parts: list[Formula]) -> Formula:
    if any(p is False for p in parts):
        return False
    return parts[0] if len(parts) == 1 else {"and": parts}


def empty_when(text: str) -> Formula:
    """The formula of one statement (Spark SQL): when it provably returns no rows."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(text, read="spark")
    ctes = {cte.alias_or_name: cte.this for cte in tree.find_all(exp.CTE)}

    def source(node: exp.Expression) -> Formula:
        if isinstance(node, exp.Table):
            if node.args.get("joins") or node.args.get("laterals") or node.args.get("pivots"):
                return False
            if not isinstance(node.this, exp.Identifier):  # a table function (range(...), ...)
                return False
            name = node.name
            return statement(ctes[name]) if name in ctes and not node.db else name
        if isinstance(node, exp.Subquery):
            if node.args.get("joins") or node.args.get("laterals") or node.args.get("pivots"):
                return False
            return statement(node.this)
        return False

    def global_aggregate(select: exp.Select) -> bool:
        for projection in select.expressions:
            for call in projection.find_all(exp.AggFunc, exp.Anonymous):
                if isinstance(call, exp.Anonymous) and call.name.lower() not in _ANONYMOUS_AGGREGATES:
                    continue
                if call.find_ancestor(exp.Window, exp.Select, exp.Subquery) is select:
                    return True
        return select.args.get("having") is not None

    def select_formula(select: exp.Select) -> Formula:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            return False
        if select.args.get("group") is None and global_aggregate(select):
            return False
        if any(lateral.args.get("outer") or not isinstance(lateral, exp.Lateral)
               for lateral in select.args.get("laterals") or ()):
            return False
        formula = source(from_.this)
        for join in select.args.get("joins") or ():
            right = source(join.this)
            side, kind = (join.side or "").upper(), (join.kind or "").upper()
            if join.args.get("method"):  # NATURAL / ASOF and the like: not read here
                return False
            if kind == "SEMI":
                formula = _or([formula, right])
            elif kind == "ANTI" or side == "LEFT":
                pass
            elif side == "RIGHT":
                formula = right
            elif side == "FULL":
                formula = _and([formula, right])
            elif kind in ("", "INNER", "CROSS") and not side:
                formula = _or([formula, right])
            else:
                return False
        return formula

    def statement(node: exp.Expression) -> Formula:
        if isinstance(node, exp.Subquery):
            return statement(node.this)
        if isinstance(node, exp.Union):
            return _and([statement(node.left), statement(node.right)])
        if isinstance(node, exp.Intersect):
            return _or([statement(node.left), statement(node.right)])
        if isinstance(node, exp.Except):
            return statement(node.left)
        if isinstance(node, exp.Select):
            return select_formula(node)
        return False

    return statement(tree)


def is_empty(formula: Formula, empty: Callable[[str], bool]) -> bool:
    """Whether `formula` holds when `empty(name)` says which tables are empty."""
    if formula is False or formula is None:
        return False
    if formula is True:
        return True
    if isinstance(formula, str):
        return empty(formula)
    if "or" in formula:
        return any(is_empty(f, empty) for f in formula["or"])
    return all(is_empty(f, empty) for f in formula["and"])
