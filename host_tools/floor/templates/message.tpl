% rebase('base.tpl')
<h1>{{title}}</h1>
<p class="error" id="message">{{text}}</p>
% if not user and 'sign in' in text:
<p><a href="/signin?next={{back if back.startswith('/') else '/'}}">Sign in</a></p>
% end
<p><a href="/">Back to the floor</a></p>
