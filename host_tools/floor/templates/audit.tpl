% rebase('base.tpl')
<h1>Audit trail</h1>
<p>Every sign-in (and failed one), sign-out, acknowledgement, refused request, account and approval, newest first. The trail is append-only: the store refuses to change or delete a row of it, and this page has nothing that could.</p>
<table class="list">
<thead><tr><th>#</th><th>at</th><th>who</th><th>what</th><th>table</th><th>detail</th><th>from</th></tr></thead>
<tbody id="audit">{{!tpl('audit_rows.tpl', rows=rows)}}</tbody>
</table>
<h2>Approvals (code hashes and configuration ids)</h2>
<p class="small">Made with <code>sicbo floor approve --db FILE --code HASH</code> or <code>--config ID</code> (<code>--revoke</code> withdraws).</p>
<table class="list" id="approvals">
<tr><th>#</th><th>kind</th><th>value</th><th>action</th><th>by</th><th>note</th><th>at</th></tr>
% for a in approvals:
<tr><td>{{a[0]}}</td><td>{{a[1]}}</td><td class="mono">{{a[2]}}</td><td>{{a[3]}}</td><td>{{a[4]}}</td><td>{{a[5]}}</td><td>{{v.when(a[6])}}</td></tr>
% end
</table>
