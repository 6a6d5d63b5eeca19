http://a.example/ 192.0.2.1 20080430204825 text/html 0

