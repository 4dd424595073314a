use super::*;

const P: &str = "/etc/passwd";
const G: &str = "/etc/group";

fn add_to(passwd: &str, group: &str) -> Result<Added, UsersError> {
    add(DEFAULT_LIMITS, P, passwd, G, group)
}

#[test]
fn login_defs_sets_the_system_ranges_and_keeps_defaults_for_the_rest() {
    assert_eq!(parse_login_defs(None), Ok(DEFAULT_LIMITS));
    assert_eq!(parse_login_defs(Some("")), Ok(DEFAULT_LIMITS));
    let l = parse_login_defs(Some(
        "# comment\nSYS_UID_MIN\t\t 201\nSYS_UID_MAX 299\n#SYS_GID_MIN 5\nSYS_GID_MAX   400\nUID_MIN 1000\n",
    ))
    .expect("parses");
    assert_eq!(
        l,
        Limits {
            min_uid: 201,
            max_uid: 299,
            min_gid: 100,
            max_gid: 400
        }
    );
    let e = parse_login_defs(Some("UMASK 022\nSYS_GID_MIN abc\n")).expect_err("not a number");
    assert_eq!(
        e.to_string(),
        r#"could not parse value for SYS_GID_MIN at line 1: strconv.ParseInt: parsing "abc": invalid syntax"#
    );
    let e = parse_login_defs(Some("SYS_UID_MAX 99999999999999999999")).expect_err("too big");
    assert_eq!(
        e.to_string(),
        r#"could not parse value for SYS_UID_MAX at line 0: strconv.ParseInt: parsing "99999999999999999999": value out of range"#
    );
}

#[test]
fn missing_users_and_groups_get_the_lowest_free_system_ids() {
    let passwd = "root:x:0:0:root:/root:/bin/bash\nsys:x:100:100:::/bin/false\nother:x:102:5:::/bin/sh";
    let group = "root:x:0:\nsys:x:100:\nfoo:x:101:\n";
    let a = add_to(passwd, group).expect("added");
    assert_eq!(
        a.passwd,
        format!(
            "{passwd}\nkubeadm-etcd:x:101:102:::/bin/false\nkubeadm-kas:x:103:103:::/bin/false\n\
             kubeadm-kcm:x:104:104:::/bin/false\nkubeadm-ks:x:105:105:::/bin/false\n"
        )
    );
    assert_eq!(
        a.group,
        format!(
            "{group}kubeadm-etcd:x:102:kubeadm-etcd\nkubeadm-kas:x:103:kubeadm-kas\n\
             kubeadm-kcm:x:104:kubeadm-kcm\nkubeadm-ks:x:105:kubeadm-ks\n\
             kubeadm-sa-key-readers:x:106:kubeadm-kas,kubeadm-kcm\n"
        )
    );
    assert_eq!(a.ids.uid(ETCD_USER), 101);
    assert_eq!(a.ids.gid(ETCD_USER), 102);
    assert_eq!(a.ids.gid(SA_KEY_READERS_GROUP), 106);
    assert_eq!(a.new_users, USERS.to_vec());
    assert_eq!(a.new_groups.len(), 5);

    // A second run finds them all with the right shape and changes nothing.
    let again = add_to(&a.passwd, &a.group).expect("reused");
    assert_eq!(
        (again.passwd.as_str(), again.group.as_str()),
        (a.passwd.as_str(), a.group.as_str())
    );
    assert_eq!(again.ids, a.ids);
    assert!(again.new_users.is_empty() && again.new_groups.is_empty());
}

#[test]
fn a_user_is_added_with_the_existing_group_of_its_name() {
    let group = "kubeadm-ks:x:500:kubeadm-ks\n";
    let a = add_to("", group).expect("added");
    assert!(
        a.passwd.contains("kubeadm-ks:x:103:500:::/bin/false\n"),
        "{}",
        a.passwd
    );
    assert!(!a.group[group.len()..].contains("kubeadm-ks:"), "{}", a.group);
    assert_eq!(a.ids.gid(KUBE_SCHEDULER_USER), 500);
}

#[test]
fn existing_entries_of_another_shape_are_refused_with_upstreams_words() {
    let ok_groups = "kubeadm-etcd:x:150:kubeadm-etcd\n";
    let cases = [
        (
            "kubeadm-etcd:x:2000:150:::/bin/false\n",
            ok_groups,
            r#"UID 2000 for user "kubeadm-etcd" is outside the system UID range: 100 - 999"#,
        ),
        (
            "kubeadm-etcd:x:150:150:::/bin/sh\n",
            ok_groups,
            r#"user "kubeadm-etcd" has unexpected shell "/bin/sh"; expected "/bin/false""#,
        ),
        (
            "kubeadm-etcd:x:150:151:::/bin/false\n",
            ok_groups,
            r#"could not find group with GID 151 for user "kubeadm-etcd""#,
        ),
        (
            "kubeadm-etcd:x:150:150:::/bin/false\n",
            "foo:x:150:\n",
            r#"user "kubeadm-etcd" has GID 150 but the group with that GID is not named "kubeadm-etcd""#,
        ),
        (
            "",
            "kubeadm-kas:x:50:kubeadm-kas\n",
            r#"GID 50 for user "kubeadm-kas" is outside the system UID range: 100 - 999"#,
        ),
        (
            "",
            "kubeadm-sa-key-readers:x:150:kubeadm-kas\n",
            r#"expected users "kubeadm-kas,kubeadm-kcm" for group "kubeadm-sa-key-readers"; got "kubeadm-kas""#,
        ),
    ];
    for (passwd, group, want) in cases {
        let e = add_to(passwd, group).expect_err(want);
        assert_eq!(
            e.to_string(),
            format!("error validating existing users and groups: {want}")
        );
    }
}

#[test]
fn lines_that_do_not_parse_name_the_file_and_line() {
    let e = add_to("root:x:0:0:root:/root:/bin/bash\nfoo:x:1\n", "").expect_err("fields");
    assert_eq!(
        e.to_string(),
        r#"could not parse "/etc/passwd": entry must have 7 fields separated by ':', got 3 at line 1: foo:x:1"#
    );
    let e = add_to("foo:x:bar:1:::\n", "").expect_err("uid");
    assert_eq!(
        e.to_string(),
        r#"could not parse "/etc/passwd": error parsing id at line 0: strconv.ParseInt: parsing "bar": invalid syntax"#
    );
    let e = add_to("foo:x:1:bar:::\n", "").expect_err("gid");
    assert!(
        e.to_string()
            .ends_with(r#"error parsing GID at line 0: strconv.ParseInt: parsing "bar": invalid syntax"#)
    );
    let e = add_to("", "\n  g:x:1\n").expect_err("group fields");
    assert_eq!(
        e.to_string(),
        r#"could not parse "/etc/group": entry must have 4 fields separated by ':', got 3 at line 1: g:x:1"#
    );
}

#[test]
fn an_exhausted_range_is_an_error() {
    let limits = Limits {
        min_uid: 100,
        max_uid: 104,
        min_gid: 100,
        max_gid: 103,
    };
    let e = add(limits, P, "a:x:101:1:::/bin/sh\n", G, "").expect_err("gids");
    assert_eq!(
        e.to_string(),
        "could not allocate 5 IDs based on existing entries in the range: 100 - 103"
    );
    let e = add(limits, P, "a:x:101:1:::/bin/sh\nb:x:102:1:::/bin/sh\n", G, "").expect_err("uids");
    assert_eq!(
        e.to_string(),
        "could not allocate 4 IDs based on existing entries in the range: 100 - 104"
    );
}

#[test]
fn removal_takes_only_the_managed_names() {
    let passwd = "root:x:0:0:::/bin/sh\nkubeadm-etcd:x:101:102:::/bin/false\nkubeadm-etcdx:x:5:5:::/bin/sh\nkubeadm-ks:x:105:105:::/bin/false\n";
    let group = "root:x:0:\nkubeadm-sa-key-readers:x:106:kubeadm-kas,kubeadm-kcm\nusers:x:100:kubeadm-ks\n";
    let (p, g) = remove(passwd, group);
    assert_eq!(p, "root:x:0:0:::/bin/sh\nkubeadm-etcdx:x:5:5:::/bin/sh\n");
    assert_eq!(g, "root:x:0:\nusers:x:100:kubeadm-ks\n");
}
