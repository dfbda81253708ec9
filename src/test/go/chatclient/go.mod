module nexuscore.test/chatclient

go 1.19
