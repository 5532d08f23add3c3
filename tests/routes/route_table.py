"""Test helper: the app's whole URL map as (method, rule, concrete url, view), walked by
the access-tier and cross-site tests so later routes are covered too."""

from flask import url_for

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def routes(app):
    """(method, rule, concrete url, view) for every route of the app."""
    out = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            view = app.view_functions[rule.endpoint]
            values = {arg: 1 if f"<int:{arg}>" in rule.rule else "x1" for arg in rule.arguments}
            url = url_for(rule.endpoint, **values)
            out.extend(
                (method, rule.rule, url, view)
                for method in sorted(rule.methods - {"HEAD", "OPTIONS"})
            )
    return out
