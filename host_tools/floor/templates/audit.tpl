% rebase('base.tpl')
<h1>Audit trail</h1>
<p>Every sign-in (and failed one), sign-out, acknowledgement, refused request, account and approval, newest first. The trail is append-only: the store refuses to change or delete a row of it, and this page has nothing that could.</p>
<form method="get" action="/audit" class="filters" id="audit-filters">
<label>account <input name="user" value="{{p.query.user or ''}}" size="12" maxlength="32"></label>
<label>action <select name="action"><option value="">any</option>
% for a in actions:
<option value="{{a}}"{{!' selected' if a == p.query.action else ''}}>{{a}}</option>
% end
</select></label>
<label>table <input name="table" value="{{p.query.table or ''}}" size="8" maxlength="32"></label>
<button type="submit">Show</button>
</form>
<p class="small" id="audit-count"><span id="audit-total">{{p.total}}</span> entr{{'y' if p.total == 1 else 'ies'}}{{' match' if p.query.filtered() else ' in all'}}{{'; these are below entry %d' % p.query.before if p.query.before is not None else ''}}{{'; this page is the newest and follows new entries as they come' if p.live else ''}}. <a href="{{p.query.href('/audit.csv', p.query.before)}}">CSV of these</a>{{!' &middot; <a href="/audit">the whole trail, newest</a>' if not p.live else ''}}</p>
<table class="list">
<thead><tr><th>#</th><th>at</th><th>who</th><th>what</th><th>table</th><th>detail</th><th>from</th></tr></thead>
<tbody id="{{'audit' if p.live else 'audit-page'}}">{{!tpl('audit_rows.tpl', rows=p.rows)}}</tbody>
</table>
<p id="audit-more"{{!'' if p.older else ' hidden'}}><a id="audit-older" href="{{p.older or ''}}">Older entries</a></p>
% if not p.rows:
<p>No entry{{' matches' if p.query.filtered() else ''}}.</p>
% end
<h2>Approvals (code hashes and configuration ids)</h2>
<p class="small">Made with <code>sicbo floor approve --db FILE --code HASH</code> or <code>--config ID</code> (<code>--revoke</code> withdraws).</p>
<table class="list" id="approvals">
<tr><th>#</th><th>kind</th><th>value</th><th>action</th><th>by</th><th>note</th><th>at</th></tr>
% for a in approvals:
<tr><td>{{a[0]}}</td><td>{{a[1]}}</td><td class="mono">{{a[2]}}</td><td>{{a[3]}}</td><td>{{a[4]}}</td><td>{{a[5]}}</td><td>{{v.when(a[6])}}</td></tr>
% end
</table>
