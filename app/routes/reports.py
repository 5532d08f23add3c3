"""HTTP adapters for the reports (all built on services.reports.account_sums): balances,
income statement and balance sheet (each with `compare`), and the series."""

from flask import Blueprint, jsonify, request

from ..services.ledger import budget_actuals, comparisons, reports, trends, validate

bp = Blueprint("reports", __name__, url_prefix="/reports")


@bp.get("/balances")
def balances():
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    return jsonify(reports.balances(start, end))


@bp.get("/income-statement")
def income_statement():
    args = request.args
    return jsonify(
        comparisons.income_statement(
            args.get("compare"), args.get("from"), args.get("to"), _statement
        )
    )


def _statement() -> dict:
    """The statement without `compare`: plain, or against a budget."""
    choice = budget_actuals.selector(request.args.get("budget"))
    if choice is not None:  # against a budget: docs/ledger.md, "Budgets"
        args = request.args
        return budget_actuals.income_statement(args.get("from"), args.get("to"), choice)
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    return reports.income_statement(start, end)


@bp.get("/balance-sheet")
def balance_sheet():
    as_of = validate.optional_date("as_of", request.args.get("as_of"))
    return jsonify(comparisons.balance_sheet(request.args.get("compare"), as_of))


@bp.get("/series")
def series():
    args = request.args
    return jsonify(trends.series(args.get("from"), args.get("to"), args.get("interval")))
