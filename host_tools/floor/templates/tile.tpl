% last = t.last
<div class="tile state-{{t.state or 'unknown'}} {{'online' if t.online == 1 else 'offline'}} {{'has-alarms' if t.open_alarms else ''}}" id="tile-{{t.id}}" data-table="{{t.id}}" data-round="{{t.round if t.round is not None else ''}}" data-result-round="{{last.round if last else ''}}" data-result="{{(last.dice_text() if not last.void else 'void') if last else ''}}" data-open-alarms="{{t.open_alarms}}" data-online="{{'' if t.online is None else t.online}}" data-code-ok="{{int(t.code_ok)}}" data-config-ok="{{int(t.config_ok)}}">
  <div class="head"><a class="tid" href="/table/{{t.id}}">{{t.id}}</a> <span class="state">{{t.state or '?'}}</span></div>
  <div class="round">round {{t.round if t.round is not None else '?'}}</div>
  <div class="last">
  % if last is None:
    <span class="none">no result yet</span>
  % elif last.void:
    <span class="void">VOID</span> <span class="small">round {{last.round}}: {{last.void_reason or ''}}</span>
  % else:
    % for d in last.dice:
{{!die(d, 20)}}\\
    % end
    <b class="total">{{last.total}}</b> <span class="mark mark-{{last.outcome}}">{{last.outcome}}</span>
  % end
  </div>
  <div class="link">{{t.online_text()}} · seen <span data-since="{{t.last_seen}}">{{v.when(t.last_seen)}}</span></div>
  <div class="alarms-n">{{!('<a class="open-alarms" href="/table/%s">%d open alarm%s</a>' % (t.id, t.open_alarms, '' if t.open_alarms == 1 else 's')) if t.open_alarms else '<span class="quiet">no open alarm</span>'}}</div>
  <div class="ids"><span class="code {{'ok' if t.code_ok else 'unapproved'}}" title="code sha256 {{t.code or 'unknown'}}">code {{v.short(t.code, 10) or '?'}}{{'' if t.code_ok else ' \u2717 not approved'}}</span>
  <span class="config {{'ok' if t.config_ok else 'unapproved'}}" title="configuration id {{t.config or 'unknown'}}">config {{t.config or '?'}}{{'' if t.config_ok else ' \u2717 not approved'}}</span></div>
  <div class="links"><a href="/table/{{t.id}}/display">results display</a></div>
</div>
