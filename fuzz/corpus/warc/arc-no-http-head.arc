http://a.example/old.html 192.0.2.1 20080430204825 text/html 79
<html><head><title>T</title></head><body><p>Body of the page.</p></body></html>
