#!/usr/bin/env python3
"""Checks conf/prometheus against conf/metrics.md, the contract of tandemd's series.

usage: check_contract.py METRICS_MD RULES_YML RULES_TEST_YML DASHBOARD_JSON EXPRS_OUT

- every series and label the rules' and the dashboard's PromQL name is in metrics.md (or is
  Prometheus's own: `up`, and the target labels `job` and `instance`);
- every alert has severity, summary, description and a runbook naming a `tandem` command, and
  a promtool case where it fires and one where it must not;
- the dashboard is a Grafana dashboard whose panels all query ${DS_PROMETHEUS};
- EXPRS_OUT gets the dashboard's expressions as recording rules, Grafana's variables replaced,
  for `promtool check rules` to parse.

Prints one line per problem and exits 1 if there is any.
"""
import json
import re
import sys

import yaml

PROMETHEUS_SERIES = {"up"}
TARGET_LABELS = {"job", "instance", "__name__"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# Words of PromQL that stand where a series name could: operators and modifiers.
KEYWORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "by", "without", "on",
            "ignoring", "group_left", "group_right"}
GROUPING = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)"
# Grafana's variables, as a value PromQL parses.
GRAFANA_VARS = [("$__rate_interval", "1m"), ("$__range", "1h"), ("$__interval", "1m"),
                ("$instance", ".*"), ("$cluster", "prod")]


def contract(path):
    """The series (with a histogram's suffixes) and labels metrics.md lists."""
    series, labels = set(), set()
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        if len(cells) >= 4 and cells[1] in ("gauge", "counter", "histogram"):
            series.add(name)
            if cells[1] == "histogram":
                series.update(name + s for s in HISTOGRAM_SUFFIXES)
                labels.add("le")
            # `vs`, `direction` (`in`, `out`): the labels, not their values in brackets
            labels.update(re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", cells[2])))
        else:  # the table of labels
            labels.add(name)
    return series, labels


def names_in(expr):
    """(series, labels) that a PromQL expression names."""
    s = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)
    matchers = " ".join(re.findall(r"\{[^}]*\}", s))
    labels = set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", matchers))
    for group in re.findall(GROUPING, s):
        labels.update(w.strip() for w in group.split(",") if w.strip())
    s = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", s)
    s = re.sub(GROUPING, " ", s)
    series = set()
    for m in re.finditer(r"(?<![\w.])[a-zA-Z_:][\w:]*", s):
        if m.group(0) in KEYWORDS or s[m.end():].lstrip().startswith("("):
            continue  # an operator, or a function's or aggregation's name
        series.add(m.group(0))
    return series, labels


def main(metrics_md, rules_path, tests_path, dashboard_path, exprs_out):
    problems = []
    known_series, known_labels = contract(metrics_md)
    if len(known_series) < 10:
        problems.append(f"{metrics_md}: only {len(known_series)} series; has its table changed?")
    known_series |= PROMETHEUS_SERIES
    known_labels |= TARGET_LABELS

    def check(where, expr):
        series, labels = names_in(expr)
        for name in sorted(series - known_series):
            problems.append(f"{where}: series {name} is not in {metrics_md}")
        for name in sorted(labels - known_labels):
            problems.append(f"{where}: label {name} is not in {metrics_md}")

    rules = [r for g in yaml.safe_load(open(rules_path))["groups"] for r in g["rules"]]
    for rule in rules:
        name = rule.get("alert") or rule.get("record")
        check(f"{rules_path}: {name}", rule["expr"])
        if "alert" not in rule:
            continue
        if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            problems.append(f"{rules_path}: {name} has no severity critical, warning or info")
        notes = rule.get("annotations", {})
        for key in ("summary", "description", "runbook"):
            if not notes.get(key):
                problems.append(f"{rules_path}: {name} has no annotation {key}")
        if not re.search(r"`tandem [a-z]", notes.get("runbook", "")):
            problems.append(f"{rules_path}: {name}'s runbook names no `tandem ...` command")

    # Every alert fires in some case and stays quiet in another.
    fires, quiet = set(), set()
    for group in yaml.safe_load(open(tests_path))["tests"]:
        for case in group.get("alert_rule_test", []):
            (fires if case.get("exp_alerts") else quiet).add(case["alertname"])
    for rule in rules:
        if "alert" in rule:
            for seen, what in ((fires, "fires"), (quiet, "must not fire")):
                if rule["alert"] not in seen:
                    problems.append(f"{tests_path}: no case where {rule['alert']} {what}")

    dash = json.load(open(dashboard_path))
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    if dash.get("schemaVersion", 0) < 36:
        problems.append(f"{dashboard_path}: schemaVersion {dash.get('schemaVersion')}, under 36")
    if variables.get("DS_PROMETHEUS", {}).get("type") != "datasource":
        problems.append(f"{dashboard_path}: no datasource variable DS_PROMETHEUS")
    exprs = []
    for var in variables.values():
        if var.get("type") == "query":
            # label_values(SELECTOR, LABEL): SELECTOR is PromQL, LABEL a label.
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", var.get("definition", ""))
            if not m:
                problems.append(f"{dashboard_path}: variable {var.get('name')}: no label_values()")
                continue
            exprs.append((f"variable {var['name']}", m.group(1)))
            if m.group(2) not in known_labels:
                problems.append(f"{dashboard_path}: variable {var['name']}: label {m.group(2)} "
                                f"is not in {metrics_md}")
    ids = set()
    for panel in dash.get("panels", []):
        title = panel.get("title")
        if panel.get("id") in ids:
            problems.append(f"{dashboard_path}: panel id {panel.get('id')} twice")
        ids.add(panel.get("id"))
        if panel.get("type") == "row":
            continue
        if "gridPos" not in panel or not panel.get("targets"):
            problems.append(f"{dashboard_path}: panel {title!r} has no gridPos or no targets")
        for t in [panel] + panel.get("targets", []):
            if t.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
                problems.append(f"{dashboard_path}: panel {title!r}: not ${{DS_PROMETHEUS}}")
        for t in panel.get("targets", []):
            if not t.get("expr"):
                problems.append(f"{dashboard_path}: panel {title!r} {t.get('refId')}: no expr")
                continue
            exprs.append((f"panel {title!r} {t.get('refId')}", t["expr"]))
    rules_out = []
    for where, expr in exprs:
        check(f"{dashboard_path}: {where}", expr)
        for var, value in GRAFANA_VARS:
            expr = expr.replace(var, value)
        if "$" in expr:
            problems.append(f"{dashboard_path}: {where}: a variable unknown here: {expr}")
        rules_out.append({"record": f"dashboard:expr_{len(rules_out)}", "expr": expr})
    with open(exprs_out, "w") as out:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules_out}]}, out)

    for p in problems:
        print(f"FAIL: {p}")
    print(f"{len(rules)} rules, {len(exprs)} dashboard expressions, "
          f"{len(known_series)} known series: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
