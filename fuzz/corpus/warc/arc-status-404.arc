http://a.example/ 192.0.2.1 20080430204825 text/html 30
HTTP/1.1 404 Not Found

nope
