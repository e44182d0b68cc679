<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{{csrf}}">
<title>{{title}} · Sic Bo floor</title>
<link rel="stylesheet" href="/static/floor.css">
<script src="/static/floor.js" defer></script>
</head>
<body data-page="{{page}}" data-table="{{get('table_id', '')}}" data-version="{{version}}" class="{{get('body_class', '')}}">
% if not get('bare', False):
<header class="bar">
  <nav><a href="/" class="home">Sic Bo floor</a> <a href="/alarms">Alarms</a> <a href="/audit">Audit trail</a></nav>
  <span class="who" id="who">
  % if user:
    signed in as <b id="user">{{user}}</b>
    <form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Sign out</button></form>
  % else:
    <a href="/signin?next={{path}}" id="signin-link">Sign in</a> <span class="hint">(staff: to acknowledge alarms)</span>
  % end
  </span>
</header>
% end
<main>
% if get('health', None) is not None:
{{!tpl('health.tpl', h=health)}}
<div id="stream-lost" class="health health-alarm" role="status" hidden>This page has lost the floor view's server; retrying: what shows may be old.</div>
% end
{{!base}}
</main>
</body>
</html>
