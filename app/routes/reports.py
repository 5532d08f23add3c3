"""HTTP adapters for the reports (all built on services.reports.account_sums): balances,
income statement and balance sheet (each with `compare`), the series, and an account's
forecast over its schedules (services/ledger/forecast.py)."""

from flask import Blueprint, jsonify, request

from ..services.ledger import budget_actuals, comparisons, forecast, reports, trends, validate

bp = Blueprint("reports", __name__, url_prefix="/reports")


@bp.get("/balances")
def balances():
    start, end = validate.window(request.args.get("from"), request.args.get("to"))
    return jsonify(reports.balances(start, end))


@bp.get("/income-statement")
def income_statement():
    args = request.args  # against a budget when one is named: docs/ledger.md, "Budgets"
    return jsonify(
        comparisons.income_statement(
            args.get("compare"),
            args.get("from"),
            args.get("to"),
            lambda: budget_actuals.requested_income_statement(
                args.get("from"), args.get("to"), args.get("budget")
            ),
        )
    )


@bp.get("/balance-sheet")
def balance_sheet():
    as_of = validate.optional_date("as_of", request.args.get("as_of"))
    return jsonify(comparisons.balance_sheet(request.args.get("compare"), as_of))


@bp.get("/series")
def series():
    args = request.args
    return jsonify(trends.series(args.get("from"), args.get("to"), args.get("interval")))


@bp.get("/forecast")
def forecast_report():
    return jsonify(forecast.forecast(request.args))
