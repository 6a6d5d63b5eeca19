filedesc://seed.arc 0.0.0.0 20080430204825 text/plain 76
1 1 InternetArchive
URL IP-address Archive-date Content-type Archive-length

