"""`ralph report`: what a feature's runs did and cost, from its record files alone.

receipt.py gathers (pure), sources.py reads the files, text.py words it for a terminal, html.py and charts.py
write the page of `--html` (plotly, an optional extra, imported only there).
"""
