@echo off
rem The edgelm launcher for Windows: finds Java (JAVA_HOME, else java on the PATH), builds the jar on first use in a
rem source checkout (needs Maven), or uses lib\edgelm.jar in an unpacked distribution; runs it with the flags it needs.
setlocal
set "ROOT=%~dp0.."
if defined JAVA_HOME (set "JAVA=%JAVA_HOME%\bin\java.exe") else (set "JAVA=java")
"%JAVA%" -XshowSettings:properties -version 2>&1 | findstr /r /c:"java.specification.version = 2[5-9]" /c:"java.specification.version = [3-9][0-9]" >nul
if errorlevel 1 (
  echo edgelm: EdgeLM needs a JDK 25 or newer: winget install EclipseAdoptium.Temurin.25.JDK, or https://adoptium.net/temurin/releases/?version=25 ; then set JAVA_HOME to it 1>&2
  exit /b 1
)
if exist "%ROOT%\lib\edgelm.jar" if not exist "%ROOT%\pom.xml" (
  set "JAR=%ROOT%\lib\edgelm.jar"
  goto run
)
set "JAR=%ROOT%\edgelm-cli\target\edgelm.jar"
if not exist "%JAR%" (
  echo edgelm: building %JAR% ^(once; about a minute^) ... 1>&2
  call mvn -q -B -f "%ROOT%\pom.xml" -DskipTests -pl edgelm-cli -am package 1>&2
  if errorlevel 1 (
    echo edgelm: the build failed ^(output above^); Maven: https://maven.apache.org/download.cgi 1>&2
    exit /b 1
  )
)
:run
"%JAVA%" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -XX:+UseCountedLoopSafepoints -XX:LoopStripMiningIter=1000 -Xms64m -Xmn32m %EDGELM_JAVA_OPTS% -jar "%JAR%" %*
exit /b %ERRORLEVEL%
