% t = d['t']
% st = d['stats']
<div class="dhead"><span class="dtable">TABLE {{t.id}}</span> <span class="dstate state-{{t.state or 'unknown'}}">{{(t.state or '?').upper()}}</span> <span class="dround">round {{t.round if t.round is not None else '?'}}</span>
% if t.online != 1:
<span class="offline-banner">{{t.online_text().upper()}}</span>
% end
</div>
<div class="dbody">
<section class="left">
<section class="last20">
<h2>Last {{len(d['shown'])}} results</h2>
<ol id="results">
% for i, r in enumerate(d['shown']):
<li class="result {{'void' if r.void else 'mark-' + (r.outcome or 'none')}} {{'newest' if i == 0 else ''}}" data-round="{{r.round}}" data-dice="{{r.dice_text()}}" data-total="{{r.total if r.total is not None else ''}}" data-outcome="{{r.outcome or ''}}" data-void="{{r.void_reason if r.void else ''}}">
  <span class="rid">{{r.round}}</span>
  % if r.void:
  <span class="voidword">VOID</span> <span class="reason">{{r.void_reason or ''}}</span>
  % else:
  <span class="dice">
  % for f in r.dice or ():
{{!die(f, 30)}}\\
  % end
  </span>
  <b class="total">{{r.total}}</b> <span class="mark mark-{{r.outcome}}">{{ {'B': 'BIG', 'S': 'SMALL', 'T': 'TRIPLE'}.get(r.outcome, '') }}</span>
  % if r.corrected:
  <span class="corr" title="corrected under the supervisor key">corrected</span>
  % end
  % end
</li>
% end
</ol>
</section>
<h2>Big / Small road</h2>
<table class="road" id="road">
% for row in d['road']:
<tr>
% for c in row:
% if c is None:
<td></td>
% else:
<td><span class="bead bead-{{c[0] or 'none'}}" data-outcome="{{c[0]}}" data-triples="{{c[1]}}">{{ {'B': 'B', 'S': 'S'}.get(c[0], '') }}</span>{{!('<i class="tie">%d</i>' % c[1]) if c[1] else ''}}</td>
% end
% end
</tr>
% end
</table>
<p class="legend"><span class="bead bead-B">B</span> big 11-17 <span class="bead bead-S">S</span> small 4-10 <i class="tie">1</i> triples after it (big and small lose)</p>
<h2>Last {{st['rounds']}} results: hot and cold</h2>
<div class="hc" id="hotcold" data-hot-totals="{{' '.join(map(str, st['hot_totals']))}}" data-cold-totals="{{' '.join(map(str, st['cold_totals']))}}" data-hot-faces="{{' '.join(map(str, st['hot_faces']))}}" data-cold-faces="{{' '.join(map(str, st['cold_faces']))}}">
<div class="counts totals">
% for tot, n in st['totals'].items():
<span class="cnt {{'hot' if tot in st['hot_totals'] else 'cold' if tot in st['cold_totals'] else ''}}" data-total="{{tot}}" data-count="{{n}}"><b>{{tot}}</b>{{n}}</span>
% end
</div>
<div class="counts faces">
% for f, n in st['faces'].items():
<span class="cnt {{'hot' if f in st['hot_faces'] else 'cold' if f in st['cold_faces'] else ''}}" data-face="{{f}}" data-count="{{n}}">{{!die(f, 24)}}{{n}}</span>
% end
</div>
<p class="legend">hot: {{', '.join(map(str, st['hot_totals']))}} (totals), {{', '.join(map(str, st['hot_faces']))}} (faces) · cold: {{', '.join(map(str, st['cold_totals']))}}, {{', '.join(map(str, st['cold_faces']))}}</p>
</div>
</section>
<section class="right">
<h2>Round {{d['latest'] if d['latest'] is not None else '-'}} on the layout</h2>
<section class="layout" id="layout" data-round="{{d['latest'] if d['latest'] is not None else ''}}">
% if d['layout_warning']:
<p class="legend" id="layout-warning">Layout not shown: the floor's table file is not this table's.</p>
% end
{{!d['svg']}}
</section>
</section>
</div>
