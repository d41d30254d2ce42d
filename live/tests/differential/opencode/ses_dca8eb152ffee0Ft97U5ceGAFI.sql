PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE `workspace` (
          `id` text PRIMARY KEY,
          `type` text NOT NULL,
          `name` text DEFAULT '' NOT NULL,
          `branch` text,
          `directory` text,
          `extra` text,
          `project_id` text NOT NULL,
          `time_used` integer NOT NULL,
          CONSTRAINT `fk_workspace_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `data_migration` (
          `name` text PRIMARY KEY,
          `time_completed` integer NOT NULL
        );
CREATE TABLE `account_state` (
          `id` integer PRIMARY KEY,
          `active_account_id` text,
          `active_org_id` text,
          CONSTRAINT `fk_account_state_active_account_id_account_id_fk` FOREIGN KEY (`active_account_id`) REFERENCES `account`(`id`) ON DELETE SET NULL
        );
CREATE TABLE `account` (
          `id` text PRIMARY KEY,
          `email` text NOT NULL,
          `url` text NOT NULL,
          `access_token` text NOT NULL,
          `refresh_token` text NOT NULL,
          `token_expiry` integer,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL
        );
CREATE TABLE `control_account` (
          `email` text NOT NULL,
          `url` text NOT NULL,
          `access_token` text NOT NULL,
          `refresh_token` text NOT NULL,
          `token_expiry` integer,
          `active` integer NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          CONSTRAINT `control_account_pk` PRIMARY KEY(`email`, `url`)
        );
CREATE TABLE `credential` (
          `id` text PRIMARY KEY,
          `integration_id` text,
          `label` text NOT NULL,
          `value` text NOT NULL,
          `connector_id` text,
          `method_id` text,
          `active` integer,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL
        );
CREATE TABLE `event_sequence` (
          `aggregate_id` text PRIMARY KEY,
          `seq` integer NOT NULL,
          `owner_id` text
        );
INSERT INTO event_sequence VALUES('ses_dca8eb152ffee0Ft97U5ceGAFI',61,NULL);
CREATE TABLE `event` (
          `id` text PRIMARY KEY,
          `aggregate_id` text NOT NULL,
          `seq` integer NOT NULL,
          `type` text NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_event_aggregate_id_event_sequence_aggregate_id_fk` FOREIGN KEY (`aggregate_id`) REFERENCES `event_sequence`(`aggregate_id`) ON DELETE CASCADE
        );
INSERT INTO event VALUES('evt_235714eb9001wCk9RyrgfGLPY6','ses_dca8eb152ffee0Ft97U5ceGAFI',0,'session.created.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"title":"New session - 2026-12-02T06:29:07.885Z","version":"1.18.33","time":{"created":1796192947885,"updated":1796192947885},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_2357151d6001DPapw5w2k653qI','ses_dca8eb152ffee0Ft97U5ceGAFI',1,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"title":"New session - 2026-12-02T06:29:07.885Z","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192948691},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_2357151ec001fxYPYIMoKclMjJ','ses_dca8eb152ffee0Ft97U5ceGAFI',2,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_2357151d3001j4EHXdNGh37Asi","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"user","time":{"created":1796192948691},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}}');
INSERT INTO event VALUES('evt_235715e22001QUJo6mvd5fege8','ses_dca8eb152ffee0Ft97U5ceGAFI',3,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357151e9001C3sAr5MbhsKBnE","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_2357151d3001j4EHXdNGh37Asi","type":"text","text":"\"run two commands\""},"time":1796192951842}');
INSERT INTO event VALUES('evt_235715e2e001wQ43R8lACN7I4t','ses_dca8eb152ffee0Ft97U5ceGAFI',4,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"title":"New session - 2026-12-02T06:29:07.885Z","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192951847},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_235715e61001J3r6ot2CZHJCO5','ses_dca8eb152ffee0Ft97U5ceGAFI',5,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235715e60001at3hUlPoe5Zo2U","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192951904},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}');
INSERT INTO event VALUES('evt_235715efa001kNa7x6FMKJNOJy','ses_dca8eb152ffee0Ft97U5ceGAFI',6,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"title":"New session - 2026-12-02T06:29:07.885Z","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192952055},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_235715f1b001qQRPABub94rVp2','ses_dca8eb152ffee0Ft97U5ceGAFI',7,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_2357151d3001j4EHXdNGh37Asi","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"user","time":{"created":1796192948691},"summary":{"diffs":[]},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}}');
INSERT INTO event VALUES('evt_235716007001d7OQvHje4ja28j','ses_dca8eb152ffee0Ft97U5ceGAFI',8,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192952055},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_2357161cc0016C01PGlo13OS99','ses_dca8eb152ffee0Ft97U5ceGAFI',9,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161cc001cFyp3Z9MONsqiV","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"step-start"},"time":1796192952780}');
INSERT INTO event VALUES('evt_2357161d8001JEOniemNWBnWEw','ses_dca8eb152ffee0Ft97U5ceGAFI',10,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161d70015qjV84syzm509S","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_0","tool":"bash","state":{"status":"pending","input":{},"raw":""}},"time":1796192952792}');
INSERT INTO event VALUES('evt_2357161e4001XcBzBkal277Krg','ses_dca8eb152ffee0Ft97U5ceGAFI',11,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161d70015qjV84syzm509S","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"time":{"start":1796192952804}}},"time":1796192952804}');
INSERT INTO event VALUES('evt_2357161e80012I32hKx4ImnLap','ses_dca8eb152ffee0Ft97U5ceGAFI',12,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161e8001QKV8GkvFLYH8Pr","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_1","tool":"bash","state":{"status":"pending","input":{},"raw":""}},"time":1796192952808}');
INSERT INTO event VALUES('evt_2357161fe001heBuwWXmUz1dra','ses_dca8eb152ffee0Ft97U5ceGAFI',13,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161e8001QKV8GkvFLYH8Pr","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"time":{"start":1796192952829}}},"time":1796192952829}');
INSERT INTO event VALUES('evt_235716682001DjoUl0liFtUB5Z','ses_dca8eb152ffee0Ft97U5ceGAFI',14,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161d70015qjV84syzm509S","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"metadata":{"output":""},"time":{"start":1796192952804}}},"time":1796192953985}');
INSERT INTO event VALUES('evt_23571668f001pJu8SZcHfzCjDS','ses_dca8eb152ffee0Ft97U5ceGAFI',15,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161e8001QKV8GkvFLYH8Pr","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"metadata":{"output":""},"time":{"start":1796192952829}}},"time":1796192953999}');
INSERT INTO event VALUES('evt_235716928001WzUMSjxpx17kOZ','ses_dca8eb152ffee0Ft97U5ceGAFI',16,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161d70015qjV84syzm509S","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"metadata":{"output":"one\n"},"time":{"start":1796192952804}}},"time":1796192954664}');
INSERT INTO event VALUES('evt_235716a3b00126Afc5xJts0NXI','ses_dca8eb152ffee0Ft97U5ceGAFI',17,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161d70015qjV84syzm509S","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_0","tool":"bash","state":{"status":"completed","input":{"command":"echo one","description":"Print one"},"output":"one\n","title":"echo one","metadata":{"output":"one\n","exit":0,"truncated":false},"time":{"start":1796192952804,"end":1796192954939}}},"time":1796192954939}');
INSERT INTO event VALUES('evt_235716a6c001QnrO0672R6n0ui','ses_dca8eb152ffee0Ft97U5ceGAFI',18,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161e8001QKV8GkvFLYH8Pr","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n"},"time":{"start":1796192952829}}},"time":1796192954988}');
INSERT INTO event VALUES('evt_235716a90001XYPAxZjHti5aTa','ses_dca8eb152ffee0Ft97U5ceGAFI',19,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357161e8001QKV8GkvFLYH8Pr","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"tool","callID":"call_fake000001_1","tool":"bash","state":{"status":"completed","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","title":"ls /nonexistent-dir","metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","exit":2,"truncated":false},"time":{"start":1796192952829,"end":1796192955023}}},"time":1796192955024}');
INSERT INTO event VALUES('evt_235716a970019wmXr0yAgQhUiF','ses_dca8eb152ffee0Ft97U5ceGAFI',20,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235716a97001W0105LfZniTl1Z","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235715e60001at3hUlPoe5Zo2U","type":"step-finish","reason":"tool-calls","cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}},"time":1796192955031}');
INSERT INTO event VALUES('evt_235716a9c001b1DSx2D8LOHD7Y','ses_dca8eb152ffee0Ft97U5ceGAFI',21,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235715e60001at3hUlPoe5Zo2U","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192951904},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}}');
INSERT INTO event VALUES('evt_235716aa2001mkn2iYnMzL5IuC','ses_dca8eb152ffee0Ft97U5ceGAFI',22,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235715e60001at3hUlPoe5Zo2U","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192951904,"completed":1796192955042},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}}');
INSERT INTO event VALUES('evt_235716aaa0015sNfEveylMl3q3','ses_dca8eb152ffee0Ft97U5ceGAFI',23,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235716aaa0017o74q6adN9XEG4","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192955050},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}');
INSERT INTO event VALUES('evt_235716b5c001w2V9C8gWAITPLt','ses_dca8eb152ffee0Ft97U5ceGAFI',24,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235716b5c001J649dXreMEj895","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235716aaa0017o74q6adN9XEG4","type":"step-start"},"time":1796192955228}');
INSERT INTO event VALUES('evt_235716b61001K5KY9aKCwb87sq','ses_dca8eb152ffee0Ft97U5ceGAFI',25,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235716b600014DPtMtFTTnsuuj","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235716aaa0017o74q6adN9XEG4","type":"text","text":"","time":{"start":1796192955232}},"time":1796192955232}');
INSERT INTO event VALUES('evt_235716b6a0014Jwwxt4z8r5TKW','ses_dca8eb152ffee0Ft97U5ceGAFI',26,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235716b600014DPtMtFTTnsuuj","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235716aaa0017o74q6adN9XEG4","type":"text","text":"ok","time":{"start":1796192955232,"end":1796192955242}},"time":1796192955242}');
INSERT INTO event VALUES('evt_235716b85001Zr8cbn2wzmHWEX','ses_dca8eb152ffee0Ft97U5ceGAFI',27,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235716b71001n08HOpbfV5xnKD","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235716aaa0017o74q6adN9XEG4","type":"step-finish","reason":"stop","cost":0,"tokens":{"total":7815,"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}},"time":1796192955264}');
INSERT INTO event VALUES('evt_235716b880011uesVSsBfOqjAc','ses_dca8eb152ffee0Ft97U5ceGAFI',28,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235716aaa0017o74q6adN9XEG4","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192955050},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7815,"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}}');
INSERT INTO event VALUES('evt_235716b9a0017bnc3nEQBn8HAH','ses_dca8eb152ffee0Ft97U5ceGAFI',29,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235716aaa0017o74q6adN9XEG4","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192955050,"completed":1796192955290},"parentID":"msg_2357151d3001j4EHXdNGh37Asi","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7815,"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}}');
INSERT INTO event VALUES('evt_235716bd00015rlT5Q1VQYEcYc','ses_dca8eb152ffee0Ft97U5ceGAFI',30,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192955342},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_235716bd8001hzu0KMdU0GBEX8','ses_dca8eb152ffee0Ft97U5ceGAFI',31,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192955351},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_23571824d001hTgUh7Y04y1uJz','ses_dca8eb152ffee0Ft97U5ceGAFI',32,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718245001Ge7VR32K6e5F5R","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"user","time":{"created":1796192961093},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}}');
INSERT INTO event VALUES('evt_235718c39001YLTR5OUC8Eao0l','ses_dca8eb152ffee0Ft97U5ceGAFI',33,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_23571824a001DNWs6Ot3YpvO5f","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718245001Ge7VR32K6e5F5R","type":"text","text":"\"and again\""},"time":1796192963640}');
INSERT INTO event VALUES('evt_235718c41001KQQvzfydkze2ok','ses_dca8eb152ffee0Ft97U5ceGAFI',34,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192963647},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_235718c5f001NxMPNB4g11f68i','ses_dca8eb152ffee0Ft97U5ceGAFI',35,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718c5f0017752LOwZvNcanc","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192963679},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}');
INSERT INTO event VALUES('evt_235718cf2001D0A86eIuw4ZSQG','ses_dca8eb152ffee0Ft97U5ceGAFI',36,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192963824},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_235718cf8001cBLcmfvPx6X35T','ses_dca8eb152ffee0Ft97U5ceGAFI',37,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718245001Ge7VR32K6e5F5R","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"user","time":{"created":1796192961093},"summary":{"diffs":[]},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}}');
INSERT INTO event VALUES('evt_235718ea8001UsI3KcA2Bsml2H','ses_dca8eb152ffee0Ft97U5ceGAFI',38,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ea7001Gno2axdkWr3ITm","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"step-start"},"time":1796192964263}');
INSERT INTO event VALUES('evt_235718eb0001WM5BGVuu1Ah9c6','ses_dca8eb152ffee0Ft97U5ceGAFI',39,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718eaf001tJG6vaNuwWlpgq","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_0","tool":"bash","state":{"status":"pending","input":{},"raw":""}},"time":1796192964271}');
INSERT INTO event VALUES('evt_235718ec1001ZSotZAVCOAUmaW','ses_dca8eb152ffee0Ft97U5ceGAFI',40,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718eaf001tJG6vaNuwWlpgq","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"time":{"start":1796192964288}}},"time":1796192964288}');
INSERT INTO event VALUES('evt_235718ec6001CDSu4HTb3ZIQmr','ses_dca8eb152ffee0Ft97U5ceGAFI',41,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ec5001IedMrN9SiYqU1L","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_1","tool":"bash","state":{"status":"pending","input":{},"raw":""}},"time":1796192964294}');
INSERT INTO event VALUES('evt_235718ed3001QDSBgvwRBXIEJG','ses_dca8eb152ffee0Ft97U5ceGAFI',42,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ec5001IedMrN9SiYqU1L","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"time":{"start":1796192964307}}},"time":1796192964307}');
INSERT INTO event VALUES('evt_2357193ab001yku5YeMFUB2Xow','ses_dca8eb152ffee0Ft97U5ceGAFI',43,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718eaf001tJG6vaNuwWlpgq","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"metadata":{"output":""},"time":{"start":1796192964288}}},"time":1796192965547}');
INSERT INTO event VALUES('evt_2357193bb001BkwhzEpjAOLR1w','ses_dca8eb152ffee0Ft97U5ceGAFI',44,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ec5001IedMrN9SiYqU1L","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"metadata":{"output":""},"time":{"start":1796192964307}}},"time":1796192965562}');
INSERT INTO event VALUES('evt_2357195d1001Ol085ABv44i54z','ses_dca8eb152ffee0Ft97U5ceGAFI',45,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718eaf001tJG6vaNuwWlpgq","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_0","tool":"bash","state":{"status":"running","input":{"command":"echo one","description":"Print one"},"metadata":{"output":"one\n"},"time":{"start":1796192964288}}},"time":1796192966097}');
INSERT INTO event VALUES('evt_2357196ad001jsrEEOEB9FfC0q','ses_dca8eb152ffee0Ft97U5ceGAFI',46,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718eaf001tJG6vaNuwWlpgq","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_0","tool":"bash","state":{"status":"completed","input":{"command":"echo one","description":"Print one"},"output":"one\n","title":"echo one","metadata":{"output":"one\n","exit":0,"truncated":false},"time":{"start":1796192964288,"end":1796192966316}}},"time":1796192966317}');
INSERT INTO event VALUES('evt_2357196b7001uKqqf5Sl3t8kCR','ses_dca8eb152ffee0Ft97U5ceGAFI',47,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ec5001IedMrN9SiYqU1L","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_1","tool":"bash","state":{"status":"running","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n"},"time":{"start":1796192964307}}},"time":1796192966327}');
INSERT INTO event VALUES('evt_2357196ee001VV5YkJ5Gisx9U7','ses_dca8eb152ffee0Ft97U5ceGAFI',48,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235718ec5001IedMrN9SiYqU1L","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"tool","callID":"call_fake000003_1","tool":"bash","state":{"status":"completed","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","title":"ls /nonexistent-dir","metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","exit":2,"truncated":false},"time":{"start":1796192964307,"end":1796192966381}}},"time":1796192966382}');
INSERT INTO event VALUES('evt_23571970a001ecAy6326sXpnOm','ses_dca8eb152ffee0Ft97U5ceGAFI',49,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_23571970a001vEWJv423IILvpO","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_235718c5f0017752LOwZvNcanc","type":"step-finish","reason":"tool-calls","cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}},"time":1796192966410}');
INSERT INTO event VALUES('evt_235719714001ZKeuNmY8w5zcNV','ses_dca8eb152ffee0Ft97U5ceGAFI',50,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718c5f0017752LOwZvNcanc","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192963679},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}}');
INSERT INTO event VALUES('evt_235719740001kxSuJ4ZdniEN8N','ses_dca8eb152ffee0Ft97U5ceGAFI',51,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718c5f0017752LOwZvNcanc","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192963679,"completed":1796192966456},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}}');
INSERT INTO event VALUES('evt_23571974b001EIOooVcIaC5X1A','ses_dca8eb152ffee0Ft97U5ceGAFI',52,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_23571974b0017DSbC0vktCHGOG","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192966475},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}');
INSERT INTO event VALUES('evt_2357197e900189jB45kVD0DOuQ','ses_dca8eb152ffee0Ft97U5ceGAFI',53,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":7814,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192966631},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
INSERT INTO event VALUES('evt_23571980600146pBhAWT65VqfJ','ses_dca8eb152ffee0Ft97U5ceGAFI',54,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_235718245001Ge7VR32K6e5F5R","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"user","time":{"created":1796192961093},"summary":{"diffs":[]},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"}}}');
INSERT INTO event VALUES('evt_23571985b001VeKGXVREXoOR4m','ses_dca8eb152ffee0Ft97U5ceGAFI',55,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235719818001CPbNUE2IEMJWzC","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_23571974b0017DSbC0vktCHGOG","type":"step-start"},"time":1796192966746}');
INSERT INTO event VALUES('evt_235719874001LCY7qWj6WKZ069','ses_dca8eb152ffee0Ft97U5ceGAFI',56,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235719874001Gxyq84mZjk9ISG","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_23571974b0017DSbC0vktCHGOG","type":"text","text":"","time":{"start":1796192966772}},"time":1796192966772}');
INSERT INTO event VALUES('evt_2357198a7001x3R3a2gt6x7AHK','ses_dca8eb152ffee0Ft97U5ceGAFI',57,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_235719874001Gxyq84mZjk9ISG","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_23571974b0017DSbC0vktCHGOG","type":"text","text":"ok","time":{"start":1796192966772,"end":1796192966823}},"time":1796192966823}');
INSERT INTO event VALUES('evt_2357198c1001M2FjDJrx4HP4vq','ses_dca8eb152ffee0Ft97U5ceGAFI',58,'message.part.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","part":{"id":"prt_2357198c1001HPjLqWHGwy24Kf","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","messageID":"msg_23571974b0017DSbC0vktCHGOG","type":"step-finish","reason":"stop","cost":0,"tokens":{"total":7974,"input":7973,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}},"time":1796192966849}');
INSERT INTO event VALUES('evt_2357198cf001DbyXsLGspR3K8p','ses_dca8eb152ffee0Ft97U5ceGAFI',59,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_23571974b0017DSbC0vktCHGOG","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192966475},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7974,"input":7973,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}}');
INSERT INTO event VALUES('evt_2357198d7001TL3PlqA5PHa2vL','ses_dca8eb152ffee0Ft97U5ceGAFI',60,'message.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"msg_23571974b0017DSbC0vktCHGOG","sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","role":"assistant","time":{"created":1796192966475,"completed":1796192966871},"parentID":"msg_235718245001Ge7VR32K6e5F5R","modelID":"fake-model","providerID":"fake","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7974,"input":7973,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}}');
INSERT INTO event VALUES('evt_23571995f001e01l5jf1y0pGRa','ses_dca8eb152ffee0Ft97U5ceGAFI',61,'session.updated.1','{"sessionID":"ses_dca8eb152ffee0Ft97U5ceGAFI","info":{"id":"ses_dca8eb152ffee0Ft97U5ceGAFI","slug":"eager-lagoon","projectID":"global","directory":"/home/dev/proj","path":"home/dev/proj","summary":{"additions":0,"deletions":0,"files":0},"cost":0,"tokens":{"input":15787,"output":2,"reasoning":0,"cache":{"read":0,"write":0}},"title":"ok","agent":"build","model":{"id":"fake-model","providerID":"fake","variant":"default"},"version":"1.18.33","time":{"created":1796192947885,"updated":1796192967006},"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]}}');
CREATE TABLE `permission` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `action` text NOT NULL,
          `resource` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          CONSTRAINT `fk_permission_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `project_directory` (
          `project_id` text NOT NULL,
          `directory` text NOT NULL,
          `type` text,
          `strategy` text,
          `time_created` integer NOT NULL,
          CONSTRAINT `project_directory_pk` PRIMARY KEY(`project_id`, `directory`),
          CONSTRAINT `fk_project_directory_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `project` (
          `id` text PRIMARY KEY,
          `worktree` text NOT NULL,
          `vcs` text,
          `name` text,
          `icon_url` text,
          `icon_url_override` text,
          `icon_color` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_initialized` integer,
          `sandboxes` text NOT NULL,
          `commands` text
        );
INSERT INTO project VALUES('global','/',NULL,NULL,NULL,NULL,NULL,1796192946785,1796192959519,NULL,'[]',NULL);
CREATE TABLE `message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
INSERT INTO message VALUES('msg_2357151d3001j4EHXdNGh37Asi','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192948691,1796192952094,'{"role":"user","time":{"created":1796192948691},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_235715e60001at3hUlPoe5Zo2U','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192951904,1796192955043,'{"parentID":"msg_2357151d3001j4EHXdNGh37Asi","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796192951904,"completed":1796192955042},"finish":"tool-calls"}');
INSERT INTO message VALUES('msg_235716aaa0017o74q6adN9XEG4','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192955050,1796192955291,'{"parentID":"msg_2357151d3001j4EHXdNGh37Asi","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7815,"input":7814,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796192955050,"completed":1796192955290},"finish":"stop"}');
INSERT INTO message VALUES('msg_235718245001Ge7VR32K6e5F5R','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192961093,1796192966663,'{"role":"user","time":{"created":1796192961093},"agent":"build","model":{"providerID":"fake","modelID":"fake-model"},"summary":{"diffs":[]}}');
INSERT INTO message VALUES('msg_235718c5f0017752LOwZvNcanc','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192963679,1796192966466,'{"parentID":"msg_235718245001Ge7VR32K6e5F5R","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796192963679,"completed":1796192966456},"finish":"tool-calls"}');
INSERT INTO message VALUES('msg_23571974b0017DSbC0vktCHGOG','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192966475,1796192966884,'{"parentID":"msg_235718245001Ge7VR32K6e5F5R","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/dev/proj","root":"/"},"cost":0,"tokens":{"total":7974,"input":7973,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"fake-model","providerID":"fake","time":{"created":1796192966475,"completed":1796192966871},"finish":"stop"}');
CREATE TABLE `part` (
          `id` text PRIMARY KEY,
          `message_id` text NOT NULL,
          `session_id` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
        );
INSERT INTO part VALUES('prt_2357151e9001C3sAr5MbhsKBnE','msg_2357151d3001j4EHXdNGh37Asi','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192951842,1796192951845,'{"type":"text","text":"\"run two commands\""}');
INSERT INTO part VALUES('prt_2357161cc001cFyp3Z9MONsqiV','msg_235715e60001at3hUlPoe5Zo2U','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192952780,1796192952787,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_2357161d70015qjV84syzm509S','msg_235715e60001at3hUlPoe5Zo2U','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192952792,1796192954969,'{"type":"tool","tool":"bash","callID":"call_fake000001_0","state":{"status":"completed","input":{"command":"echo one","description":"Print one"},"output":"one\n","metadata":{"output":"one\n","exit":0,"truncated":false},"title":"echo one","time":{"start":1796192952804,"end":1796192954939}}}');
INSERT INTO part VALUES('prt_2357161e8001QKV8GkvFLYH8Pr','msg_235715e60001at3hUlPoe5Zo2U','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192952808,1796192955026,'{"type":"tool","tool":"bash","callID":"call_fake000001_1","state":{"status":"completed","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","exit":2,"truncated":false},"title":"ls /nonexistent-dir","time":{"start":1796192952829,"end":1796192955023}}}');
INSERT INTO part VALUES('prt_235716a97001W0105LfZniTl1Z','msg_235715e60001at3hUlPoe5Zo2U','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192955031,1796192955033,'{"reason":"tool-calls","type":"step-finish","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part VALUES('prt_235716b5c001J649dXreMEj895','msg_235716aaa0017o74q6adN9XEG4','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192955228,1796192955230,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_235716b600014DPtMtFTTnsuuj','msg_235716aaa0017o74q6adN9XEG4','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192955232,1796192955243,'{"type":"text","text":"ok","time":{"start":1796192955232,"end":1796192955242}}');
INSERT INTO part VALUES('prt_235716b71001n08HOpbfV5xnKD','msg_235716aaa0017o74q6adN9XEG4','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192955264,1796192955270,'{"reason":"stop","type":"step-finish","tokens":{"total":7815,"input":7814,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part VALUES('prt_23571824a001DNWs6Ot3YpvO5f','msg_235718245001Ge7VR32K6e5F5R','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192963640,1796192963644,'{"type":"text","text":"\"and again\""}');
INSERT INTO part VALUES('prt_235718ea7001Gno2axdkWr3ITm','msg_235718c5f0017752LOwZvNcanc','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192964263,1796192964266,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_235718eaf001tJG6vaNuwWlpgq','msg_235718c5f0017752LOwZvNcanc','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192964271,1796192966318,'{"type":"tool","tool":"bash","callID":"call_fake000003_0","state":{"status":"completed","input":{"command":"echo one","description":"Print one"},"output":"one\n","metadata":{"output":"one\n","exit":0,"truncated":false},"title":"echo one","time":{"start":1796192964288,"end":1796192966316}}}');
INSERT INTO part VALUES('prt_235718ec5001IedMrN9SiYqU1L','msg_235718c5f0017752LOwZvNcanc','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192964294,1796192966383,'{"type":"tool","tool":"bash","callID":"call_fake000003_1","state":{"status":"completed","input":{"command":"ls /nonexistent-dir","description":"List a missing folder"},"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","metadata":{"output":"ls: cannot access ''/nonexistent-dir'': No such file or directory\n","exit":2,"truncated":false},"title":"ls /nonexistent-dir","time":{"start":1796192964307,"end":1796192966381}}}');
INSERT INTO part VALUES('prt_23571970a001vEWJv423IILvpO','msg_235718c5f0017752LOwZvNcanc','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192966410,1796192966418,'{"reason":"tool-calls","type":"step-finish","tokens":{"input":0,"output":0,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part VALUES('prt_235719818001CPbNUE2IEMJWzC','msg_23571974b0017DSbC0vktCHGOG','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192966746,1796192966761,'{"type":"step-start"}');
INSERT INTO part VALUES('prt_235719874001Gxyq84mZjk9ISG','msg_23571974b0017DSbC0vktCHGOG','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192966772,1796192966838,'{"type":"text","text":"ok","time":{"start":1796192966772,"end":1796192966823}}');
INSERT INTO part VALUES('prt_2357198c1001HPjLqWHGwy24Kf','msg_23571974b0017DSbC0vktCHGOG','ses_dca8eb152ffee0Ft97U5ceGAFI',1796192966849,1796192966851,'{"reason":"stop","type":"step-finish","tokens":{"total":7974,"input":7973,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
CREATE TABLE `session_context_epoch` (
          `session_id` text PRIMARY KEY,
          `baseline` text NOT NULL,
          `snapshot` text NOT NULL,
          `baseline_seq` integer NOT NULL,
          CONSTRAINT `fk_session_context_epoch_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `session_input` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `prompt` text NOT NULL,
          `delivery` text NOT NULL,
          `admitted_seq` integer NOT NULL,
          `promoted_seq` integer,
          `time_created` integer NOT NULL,
          CONSTRAINT `fk_session_input_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `session_message` (
          `id` text PRIMARY KEY,
          `session_id` text NOT NULL,
          `type` text NOT NULL,
          `seq` integer NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `data` text NOT NULL,
          CONSTRAINT `fk_session_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `session` (
          `id` text PRIMARY KEY,
          `project_id` text NOT NULL,
          `workspace_id` text,
          `parent_id` text,
          `slug` text NOT NULL,
          `directory` text NOT NULL,
          `path` text,
          `title` text NOT NULL,
          `version` text NOT NULL,
          `share_url` text,
          `summary_additions` integer,
          `summary_deletions` integer,
          `summary_files` integer,
          `summary_diffs` text,
          `metadata` text,
          `cost` real DEFAULT 0 NOT NULL,
          `tokens_input` integer DEFAULT 0 NOT NULL,
          `tokens_output` integer DEFAULT 0 NOT NULL,
          `tokens_reasoning` integer DEFAULT 0 NOT NULL,
          `tokens_cache_read` integer DEFAULT 0 NOT NULL,
          `tokens_cache_write` integer DEFAULT 0 NOT NULL,
          `revert` text,
          `permission` text,
          `agent` text,
          `model` text,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          `time_compacting` integer,
          `time_archived` integer,
          CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
        );
INSERT INTO session VALUES('ses_dca8eb152ffee0Ft97U5ceGAFI','global',NULL,NULL,'eager-lagoon','/home/dev/proj','home/dev/proj','ok','1.18.33',NULL,0,0,0,NULL,NULL,0.0,15787,2,0,0,0,NULL,'[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}]','build','{"id":"fake-model","providerID":"fake","variant":"default"}',1796192947885,1796192967006,NULL,NULL);
CREATE TABLE `todo` (
          `session_id` text NOT NULL,
          `content` text NOT NULL,
          `status` text NOT NULL,
          `priority` text NOT NULL,
          `position` integer NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),
          CONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE `session_share` (
          `session_id` text PRIMARY KEY,
          `id` text NOT NULL,
          `secret` text NOT NULL,
          `url` text NOT NULL,
          `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL,
          CONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
        );
CREATE TABLE IF NOT EXISTS "migration" (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
INSERT INTO migration VALUES('20260127222353_familiar_lady_ursula',1796192945999);
INSERT INTO migration VALUES('20260211171708_add_project_commands',1796192945999);
INSERT INTO migration VALUES('20260213144116_wakeful_the_professor',1796192945999);
INSERT INTO migration VALUES('20260225215848_workspace',1796192945999);
INSERT INTO migration VALUES('20260227213759_add_session_workspace_id',1796192945999);
INSERT INTO migration VALUES('20260228203230_blue_harpoon',1796192945999);
INSERT INTO migration VALUES('20260303231226_add_workspace_fields',1796192945999);
INSERT INTO migration VALUES('20260309230000_move_org_to_state',1796192946000);
INSERT INTO migration VALUES('20260312043431_session_message_cursor',1796192946000);
INSERT INTO migration VALUES('20260323234822_events',1796192946000);
INSERT INTO migration VALUES('20260410174513_workspace-name',1796192946000);
INSERT INTO migration VALUES('20260413175956_chief_energizer',1796192946000);
INSERT INTO migration VALUES('20260423070820_add_icon_url_override',1796192946000);
INSERT INTO migration VALUES('20260427172553_slow_nightmare',1796192946000);
INSERT INTO migration VALUES('20260428004200_add_session_path',1796192946000);
INSERT INTO migration VALUES('20260501142318_next_venus',1796192946000);
INSERT INTO migration VALUES('20260504145000_add_sync_owner',1796192946000);
INSERT INTO migration VALUES('20260507164347_add_workspace_time',1796192946000);
INSERT INTO migration VALUES('20260510033149_session_usage',1796192946000);
INSERT INTO migration VALUES('20260511000411_data_migration_state',1796192946004);
INSERT INTO migration VALUES('20260511173437_session-metadata',1796192946004);
INSERT INTO migration VALUES('20260601010001_normalize_storage_paths',1796192946004);
INSERT INTO migration VALUES('20260601202201_amazing_prowler',1796192946004);
INSERT INTO migration VALUES('20260602002951_lowly_union_jack',1796192946004);
INSERT INTO migration VALUES('20260602182828_add_project_directories',1796192946004);
INSERT INTO migration VALUES('20260603001617_session_message_projection_indexes',1796192946008);
INSERT INTO migration VALUES('20260603040000_session_message_projection_order',1796192946008);
INSERT INTO migration VALUES('20260603141458_session_input_inbox',1796192946009);
INSERT INTO migration VALUES('20260603160727_jittery_ezekiel_stane',1796192946009);
INSERT INTO migration VALUES('20260604172448_event_sourced_session_input',1796192946009);
INSERT INTO migration VALUES('20260605003541_add_session_context_snapshot',1796192946009);
INSERT INTO migration VALUES('20260605042240_add_context_epoch_agent',1796192946009);
INSERT INTO migration VALUES('20260611035744_credential',1796192946009);
INSERT INTO migration VALUES('20260611192811_lush_chimera',1796192946009);
INSERT INTO migration VALUES('20260612174303_project_dir_strategy',1796192946009);
INSERT INTO migration VALUES('20260622142730_simplify_session_context_epoch',1796192946009);
INSERT INTO migration VALUES('20260622170816_reset_v2_session_state',1796192946009);
INSERT INTO migration VALUES('20260622202450_simplify_session_input',1796192946009);
CREATE UNIQUE INDEX `event_aggregate_seq_idx` ON `event` (`aggregate_id`,`seq`);
CREATE INDEX `event_aggregate_type_seq_idx` ON `event` (`aggregate_id`,`type`,`seq`);
CREATE UNIQUE INDEX `permission_project_action_resource_idx` ON `permission` (`project_id`,`action`,`resource`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_input_session_pending_delivery_seq_idx` ON `session_input` (`session_id`,`promoted_seq`,`delivery`,`admitted_seq`);
CREATE UNIQUE INDEX `session_input_session_admitted_seq_idx` ON `session_input` (`session_id`,`admitted_seq`);
CREATE UNIQUE INDEX `session_input_session_promoted_seq_idx` ON `session_input` (`session_id`,`promoted_seq`);
CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`);
CREATE INDEX `session_message_session_type_seq_idx` ON `session_message` (`session_id`,`type`,`seq`);
CREATE INDEX `session_message_session_time_created_id_idx` ON `session_message` (`session_id`,`time_created`,`id`);
CREATE INDEX `session_message_time_created_idx` ON `session_message` (`time_created`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);
COMMIT;
