<span id="n-tables">{{summary['tables']}}</span> tables,
<span id="n-online">{{summary['online']}}</span> online,
<span id="n-open" class="{{'alarm' if summary['open_alarms'] else ''}}">{{summary['open_alarms']}}</span> open alarms
